import { isAppError } from '../../core/errors';
import { carriesUnsubscribe, personalized } from '../../core/message-content';
import { analyseInlineContent } from '../../core/templates/analyse';

function refusal(run: () => unknown): { code: string; field: unknown } | null {
  try {
    run();
    return null;
  } catch (error) {
    if (!isAppError(error)) throw error;
    return { code: error.code, field: error.details.field };
  }
}

describe('inline content is checked as a template is, each piece under its own field', () => {
  it('valid Liquid in subject, html and text gives the variables in order of first use', () => {
    expect(analyseInlineContent({ subject: 'Hi {{ first_name }}', html: '<p>{{ contact.email }}</p>', text: '{{ unsubscribe_url }}' })).toEqual({
      variables: ['first_name', 'contact.email', 'unsubscribe_url'],
    });
  });

  it.each([
    ['subject', { subject: 'Hi {{ first_name' }],
    ['html', { html: '<p>{{ x | no_such_filter }}</p>' }],
    ['text', { text: '{% if x %}never closed' }],
    ['html', { html: '{% include "secrets" %}' }],
  ])('a mistake in %s is 422 template_invalid naming that field', (field, content) => {
    expect(refusal(() => analyseInlineContent(content))).toEqual({ code: 'template_invalid', field });
  });

  it('absent and null pieces are not checked', () => {
    expect(analyseInlineContent({ subject: null, html: undefined })).toEqual({ variables: [] });
  });
});

describe('which messages render their own content and carry the unsubscribe link', () => {
  it('marketing mail always; a transactional send when it gives variables or asks for listUnsubscribe; otherwise as written', () => {
    expect(personalized('campaign', { listUnsubscribe: false })).toBe(true);
    expect(personalized('automation', { listUnsubscribe: false })).toBe(true);
    expect(personalized('transactional', { listUnsubscribe: false })).toBe(false);
    expect(personalized('transactional', { listUnsubscribe: false, variables: {} })).toBe(true);
    expect(personalized('transactional', { listUnsubscribe: true })).toBe(true);
    expect(carriesUnsubscribe('transactional', { listUnsubscribe: false })).toBe(false);
    expect(carriesUnsubscribe('transactional', { listUnsubscribe: true })).toBe(true);
    expect(carriesUnsubscribe('campaign', { listUnsubscribe: false })).toBe(true);
  });
});
