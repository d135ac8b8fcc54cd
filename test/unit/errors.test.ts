import { errorBody, statusFor } from '../../api/http/errors';
import { AppError, ERROR_CODES } from '../../core/errors';

describe('error rendering', () => {
  it('every code maps to a status', () => {
    for (const code of ERROR_CODES) expect(statusFor(code)).toBeGreaterThanOrEqual(400);
  });

  it('validation errors carry the flattened form/field errors as `error`', () => {
    const error = AppError.validation({ formErrors: [], fieldErrors: { name: ['Required'] } });
    expect(errorBody(error)).toEqual({ error: { formErrors: [], fieldErrors: { name: ['Required'] } } });
  });

  it('a missing scope answers { error: forbidden, need }', () => {
    expect(errorBody(new AppError('forbidden', 'x', { need: 'email:send' }))).toEqual({ error: 'forbidden', need: 'email:send' });
  });

  it('the rate limit body is exactly the spec\'s', () => {
    const error = new AppError('rate_limit_exceeded', 'x', { limit: 10, retryAfter: 1 });
    expect(errorBody(error)).toEqual({ error: 'rate_limit_exceeded', limit: 10, retryAfter: 1 });
  });

  it('other errors are { error: code, message } plus their details', () => {
    expect(errorBody(AppError.notFound('API key'))).toEqual({ error: 'not_found', message: 'API key not found' });
  });
});
