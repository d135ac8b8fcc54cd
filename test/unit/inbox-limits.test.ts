import { ByteBudget } from '../../core/inbox/byte-budget';
import { clientKey } from '../../core/inbox/client-key';

describe('the inbound bytes-in-flight budget', () => {
  it('takes bytes while they fit, refuses (taking nothing) past the limit, and fits again once given back', () => {
    const budget = new ByteBudget(100);
    expect(budget.take(60)).toBe(true);
    expect(budget.fits(40)).toBe(true);
    expect(budget.take(41)).toBe(false);
    expect(budget.inFlight).toBe(60);
    budget.give(60);
    expect(budget.take(100)).toBe(true);
  });

  it('giving back more than was taken never goes below zero', () => {
    const budget = new ByteBudget(10);
    budget.give(5);
    expect(budget.inFlight).toBe(0);
    expect(budget.take(10)).toBe(true);
  });
});

describe('the key a client is counted under', () => {
  it('an IPv4 address is itself, and its IPv4-mapped IPv6 form is the same client', () => {
    expect(clientKey('192.0.2.7')).toBe('192.0.2.7');
    expect(clientKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
  });

  it('every address of one IPv6 /64 is one client; another /64 is another', () => {
    expect(clientKey('2001:db8:1:2::1')).toBe(clientKey('2001:db8:1:2:ffff:ffff:ffff:fffe'));
    expect(clientKey('2001:db8:1:3::1')).not.toBe(clientKey('2001:db8:1:2::1'));
  });

  it('something that is no address is counted as given', () => {
    expect(clientKey('unknown')).toBe('unknown');
  });
});
