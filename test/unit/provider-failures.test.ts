import { PermanentSendError, ProviderUnavailableError } from '../../core/delivery';
import { classifySmtpFailure } from '../../providers/smtp/errors';
import { dispatchWorkflowId, pastRetryDeadline, providerRoute, recoveryBound, routeWorkspace } from '../../core/breaker';

const smtpError = (fields: { code?: string; responseCode?: number; response?: string }, message = 'failed') => Object.assign(new Error(message), fields);

describe('SMTP failures in the send path\'s terms', () => {
  it.each([
    ['a refused connection', smtpError({ code: 'ESOCKET' }, 'connect ECONNREFUSED 127.0.0.1:25')],
    ['a connection timeout', smtpError({ code: 'ETIMEDOUT' }, 'Connection timeout')],
    ['a 421 (service not available)', smtpError({ code: 'EENVELOPE', responseCode: 421 }, '421 try again later')],
    ['a 451 that speaks of throttling', smtpError({ responseCode: 451, response: '451 4.7.1 Rate limit exceeded, slow down' })],
  ])('%s is the provider down (counted by the route\'s breaker)', (_situation, error) => {
    expect(classifySmtpFailure(error)).toBeInstanceOf(ProviderUnavailableError);
  });

  it('a greylisted recipient (450 try again later) is that message\'s own transient failure, not the provider\'s', () => {
    const error = smtpError({ code: 'EENVELOPE', responseCode: 450, response: '450 4.2.0 Greylisted, please try again later' });
    expect(classifySmtpFailure(error)).toBe(error);
  });

  it('a 5xx is permanent', () => {
    expect(classifySmtpFailure(smtpError({ responseCode: 550 }, 'mailbox unavailable'))).toBeInstanceOf(PermanentSendError);
  });
});

describe('provider routes and redispatch ids', () => {
  it('email is one route for every workspace; a chat route is one workspace\'s sender or bot', () => {
    expect(providerRoute('email', 'smtp', 'w1')).toBe('email:smtp');
    expect(providerRoute('telegram', 'telegram', 'w1')).toBe('telegram:w1');
    expect(routeWorkspace('email:ses')).toBeNull();
    expect(routeWorkspace('whatsapp:w2')).toBe('w2');
  });

  it('the first dispatch keeps send:<id>; each redispatch gets its own id', () => {
    expect(dispatchWorkflowId('send:m1', 0)).toBe('send:m1');
    expect(dispatchWorkflowId('send:m1', 1)).toBe('send:m1:2');
    expect(dispatchWorkflowId('send-batch:m1', 3)).toBe('send-batch:m1:4');
  });

  it('a message is past its retry deadline a day after acceptance, not before', () => {
    const accepted = new Date('2026-11-27T00:00:00Z');
    expect(pastRetryDeadline(accepted, new Date('2026-11-27T23:59:00Z'), { deadlineMs: 86_400_000 })).toBe(false);
    expect(pastRetryDeadline(accepted, new Date('2026-11-28T00:00:00Z'), { deadlineMs: 86_400_000 })).toBe(true);
  });
});

describe('the bound after a route closes', () => {
  it('starts at a tenth of the bound and reaches all of it after the ramp; long closed, it is the bound', () => {
    expect(recoveryBound(150, 0, 5_000)).toBe(15);
    expect(recoveryBound(150, 2_500, 5_000)).toBe(83);
    expect(recoveryBound(150, 5_000, 5_000)).toBe(150);
    expect(recoveryBound(150, Date.now(), 5_000)).toBe(150);
    expect(recoveryBound(3, 0, 5_000)).toBe(1);
  });
});
