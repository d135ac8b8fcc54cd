import { type DeclaredIdentity, planAttributes, planIdentities, type StoredIdentity } from '../../core/contact-upsert';
import { type FieldDefinition, fieldsByKey } from '../../core/custom-fields';

const declared = (address: string, extra: Partial<DeclaredIdentity> = {}, index = 0): DeclaredIdentity => ({
  channel: 'email',
  address,
  index,
  ...extra,
});
const stored = (address: string, extra: Partial<StoredIdentity> = {}): StoredIdentity => ({
  channel: 'email',
  address,
  consent: 'unknown',
  verified: false,
  isPrimary: false,
  ...extra,
});

describe('planning identity changes', () => {
  it('a new contact\'s first identity of each channel is primary, and undeclared fields start empty', () => {
    const plan = planIdentities(
      [declared('a@x.com'), declared('b@x.com', {}, 1), declared('+14155550100', { channel: 'whatsapp', consent: 'opted_in' }, 2)],
      [],
    );
    expect(plan.insert).toEqual([
      { channel: 'email', address: 'a@x.com', consent: 'unknown', verified: false, isPrimary: true },
      { channel: 'email', address: 'b@x.com', consent: 'unknown', verified: false, isPrimary: false },
      { channel: 'whatsapp', address: '+14155550100', consent: 'opted_in', verified: false, isPrimary: true },
    ]);
    expect(plan.demote).toEqual([]);
  });

  it('omitted consent and verified leave the stored values; declared ones change them', () => {
    const current = [stored('a@x.com', { consent: 'opted_in', verified: true, isPrimary: true })];
    expect(planIdentities([declared('a@x.com')], current)).toEqual({ demote: [], insert: [], update: [], warnings: [] });
    expect(planIdentities([declared('a@x.com', { consent: 'opted_out' })], current).update).toEqual([
      { channel: 'email', address: 'a@x.com', consent: 'opted_out' },
    ]);
  });

  it('declaring another identity primary demotes the current one first', () => {
    const plan = planIdentities([declared('b@x.com', { isPrimary: true })], [stored('a@x.com', { isPrimary: true })]);
    expect(plan.demote).toEqual([{ channel: 'email', address: 'a@x.com' }]);
    expect(plan.insert).toEqual([expect.objectContaining({ address: 'b@x.com', isPrimary: true })]);
  });

  it('a new identity joins a channel that has a primary as a secondary', () => {
    const plan = planIdentities([declared('b@x.com')], [stored('a@x.com', { isPrimary: true })]);
    expect(plan.insert).toEqual([expect.objectContaining({ address: 'b@x.com', isPrimary: false })]);
  });

  it('false on the current primary is ignored with a warning naming the field', () => {
    const plan = planIdentities([declared('a@x.com', { isPrimary: false }, 3)], [stored('a@x.com', { isPrimary: true }), stored('b@x.com')]);
    expect(plan.update).toEqual([]);
    expect(plan.warnings).toEqual([expect.stringMatching(/^identities\[3\]\.isPrimary: false was ignored/)]);
  });
});

describe('planning attribute changes', () => {
  const fields = fieldsByKey([
    { key: 'score', type: 'number', options: null, archived: false, isSystem: false },
    { key: 'old', type: 'text', options: null, archived: true, isSystem: false },
  ] satisfies FieldDefinition[]);

  it('null deletes, free keys take any JSON, typed keys are checked', () => {
    expect(planAttributes({ a: null, b: { deep: [1] }, score: 3 }, fields)).toEqual({
      set: { b: { deep: [1] }, score: 3 },
      unset: ['a'],
      errors: {},
      warnings: [],
    });
  });

  it('a wrong type is an error on attributes.<key>; a system field is typed too', () => {
    expect(planAttributes({ score: 'x', firstName: 1 }, fields).errors).toEqual({
      'attributes.score': [expect.stringContaining('number')],
      'attributes.firstName': [expect.stringContaining('text')],
    });
  });

  it('a value for an archived field is ignored with a warning, while a null still deletes it', () => {
    expect(planAttributes({ old: 'x' }, fields)).toEqual({ set: {}, unset: [], errors: {}, warnings: [expect.stringContaining('attributes.old')] });
    expect(planAttributes({ old: null }, fields)).toEqual({ set: {}, unset: ['old'], errors: {}, warnings: [] });
  });
});
