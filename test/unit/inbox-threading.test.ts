import {
  SUBJECT_WINDOW_MS,
  chooseThread,
  normalizeMessageId,
  normalizeSubject,
  parseMessageIds,
  sesMessageIdHeader,
  sesProviderIdOf,
  threadingReferences,
  type ThreadQuery,
} from '../../core/inbox/threading';

describe('normalizeSubject', () => {
  it.each([
    ['Re: Invoice 42', 'invoice 42'],
    ['RE: re: Fwd: Invoice 42', 'invoice 42'],
    ['Fw: invoice 42', 'invoice 42'],
    ['AW: WG: Rechnung', 'rechnung'],
    ['SV: VS: Faktura', 'faktura'],
    ['Re[2]: Invoice', 'invoice'],
    ['Re(3): Invoice', 'invoice'],
    ['[support] Re: Help   me', 'help me'],
    ['Re : spaced colon', 'spaced colon'],
    ['Réf: Devis', 'devis'],
    ['  Hello  ', 'hello'],
  ])('%j normalizes to %j', (subject, normalized) => {
    expect(normalizeSubject(subject)).toBe(normalized);
  });

  it('a word that starts like a prefix is kept (Recap, Fwding)', () => {
    expect(normalizeSubject('Recap: Q3')).toBe('recap: q3');
    expect(normalizeSubject('Review the doc')).toBe('review the doc');
  });

  it('null, undefined and a subject of only prefixes normalize to the empty string', () => {
    expect(normalizeSubject(null)).toBe('');
    expect(normalizeSubject(undefined)).toBe('');
    expect(normalizeSubject('Re: Fwd:')).toBe('');
  });
});

describe('parseMessageIds', () => {
  it('reads bracketed ids in order, each once, the domain lower-cased', () => {
    expect(parseMessageIds('<a@X.example> (comment) <b@y.example>\r\n <a@x.example>')).toEqual(['a@x.example', 'b@y.example']);
  });

  it('without brackets takes the tokens that look like ids', () => {
    expect(parseMessageIds('a@x.example junk b@y.example,c@z.example')).toEqual(['a@x.example', 'b@y.example', 'c@z.example']);
  });

  it('empty and missing values give no ids', () => {
    expect(parseMessageIds('')).toEqual([]);
    expect(parseMessageIds(null)).toEqual([]);
    expect(parseMessageIds('no ids here')).toEqual([]);
  });

  it('keeps the local part as it is (case matters there)', () => {
    expect(normalizeMessageId('<AbC@Example.COM>')).toBe('AbC@example.com');
    expect(normalizeMessageId('no-at-sign')).toBe('no-at-sign');
  });
});

describe('threadingReferences', () => {
  it('puts In-Reply-To first, then References newest to oldest, without repeats', () => {
    expect(threadingReferences('<c@x>', '<a@x> <b@x> <c@x>')).toEqual(['c@x', 'b@x', 'a@x']);
  });

  it('accepts references already split into values', () => {
    expect(threadingReferences(null, ['<a@x>', '<b@x>'])).toEqual(['b@x', 'a@x']);
  });

  it('has nothing to look for without either header', () => {
    expect(threadingReferences(undefined, undefined)).toEqual([]);
  });
});

describe("SES's Message-ID form", () => {
  it('maps the us-east-1 and regional forms back to the provider id', () => {
    expect(sesProviderIdOf('<0100018c-abc-000000@email.amazonses.com>')).toBe('0100018c-abc-000000');
    expect(sesProviderIdOf('0102018c-def-000000@eu-west-1.amazonses.com')).toBe('0102018c-def-000000');
  });

  it('other ids are not SES ids', () => {
    expect(sesProviderIdOf('<abc@mail.example.com>')).toBeNull();
    expect(sesProviderIdOf('<abc@amazonses.com.evil.example>')).toBeNull();
  });

  it('builds the form SES uses, which maps back to the same id', () => {
    expect(sesMessageIdHeader('id-1', 'us-east-1')).toBe('id-1@email.amazonses.com');
    expect(sesMessageIdHeader('id-2', 'eu-west-1')).toBe('id-2@eu-west-1.amazonses.com');
    expect(sesProviderIdOf(sesMessageIdHeader('id-2', 'eu-west-1'))).toBe('id-2');
  });
});

describe('chooseThread', () => {
  const now = new Date('2026-11-26T12:00:00Z');
  const base: ThreadQuery = {
    references: [],
    threadByReference: new Map(),
    normalizedSubject: 'invoice 42',
    sender: { address: 'Alice@Example.com', authenticated: true },
    candidates: [],
    now,
    subjectWindowMs: SUBJECT_WINDOW_MS,
  };
  const candidate = (threadId: string, daysAgo: number, senderVouched = true, normalizedSubject = 'invoice 42') => ({
    threadId,
    normalizedSubject,
    senderVouched,
    lastMessageAt: new Date(now.getTime() - daysAgo * 86_400_000),
  });
  const referenced = (threadId: string, participants: string[] = ['bob@example.com']) => ({ threadId, participants });
  const stranger = { address: 'mallory@evil.example', authenticated: false };

  it('the nearest known reference decides, before any subject match', () => {
    const choice = chooseThread({
      ...base,
      references: ['unknown@x', 'b@x', 'a@x'],
      threadByReference: new Map([['a@x', referenced('t-a')], ['b@x', referenced('t-b')]]),
      candidates: [candidate('t-subject', 0)],
    });
    expect(choice).toEqual({ threadId: 't-b', by: 'reference' });
  });

  it('a reference found in a different case of the domain still matches', () => {
    expect(chooseThread({ ...base, references: ['a@X.Example'], threadByReference: new Map([['a@x.example', referenced('t-a')]]) })).toEqual({ threadId: 't-a', by: 'reference' });
  });

  it('a reference from an unauthenticated sender joins only a thread its From is already in', () => {
    const threadByReference = new Map([['a@x', referenced('t-a', ['mallory@evil.example'])], ['b@x', referenced('t-b')]]);
    expect(chooseThread({ ...base, sender: stranger, references: ['b@x'], threadByReference })).toBeNull();
    expect(chooseThread({ ...base, sender: stranger, references: ['b@x', 'a@x'], threadByReference })).toEqual({ threadId: 't-a', by: 'reference' });
  });

  it('without a known reference, joins the most recent thread with the subject in which the authenticated From takes part', () => {
    expect(chooseThread({ ...base, candidates: [candidate('old', 5), candidate('new', 1)] })).toEqual({ threadId: 'new', by: 'subject' });
  });

  it('the same subject in a thread the sender is not vouched in starts a new thread', () => {
    expect(chooseThread({ ...base, candidates: [candidate('t', 1, false)] })).toBeNull();
  });

  it('an unauthenticated From never joins by subject, even a thread it is vouched in', () => {
    expect(chooseThread({ ...base, sender: { address: 'alice@example.com', authenticated: false }, candidates: [candidate('t', 1)] })).toBeNull();
  });

  it('a different subject starts a new thread', () => {
    expect(chooseThread({ ...base, candidates: [candidate('t', 1, true, 'invoice 43')] })).toBeNull();
  });

  it('a thread quiet for longer than the window is not joined by subject', () => {
    expect(chooseThread({ ...base, candidates: [candidate('t', 31)] })).toBeNull();
  });

  it('an empty subject never threads by subject', () => {
    expect(chooseThread({ ...base, normalizedSubject: '', candidates: [candidate('t', 1, true, '')] })).toBeNull();
  });
});
