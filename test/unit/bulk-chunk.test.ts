import { bulkChunkSize } from '../../activities/delivery';

describe('bulk chunk size', () => {
  it('a provider rate → a quarter second of its sends, between 1 and 50', () => {
    expect(bulkChunkSize(1)).toBe(1);
    expect(bulkChunkSize(14)).toBe(3);
    expect(bulkChunkSize(20)).toBe(5);
    expect(bulkChunkSize(200)).toBe(50);
    expect(bulkChunkSize(5_000)).toBe(50);
  });
});
