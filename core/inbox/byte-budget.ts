/**
 * Bytes of inbound mail received and not yet stored, over every SMTP session of one listener process. Each
 * session takes what it receives before keeping it and gives it all back when its message is stored or
 * dropped, so a flood of large messages meets a temporary refusal (452) instead of filling the spool disk or
 * the process. Single-threaded: Node runs every session's callbacks on one loop, so no lock is needed.
 */
export class ByteBudget {
  private held = 0;

  constructor(readonly limit: number) {}

  get inFlight(): number {
    return this.held;
  }

  /** Whether `bytes` more would still fit (a declared SIZE, checked before any body is read). */
  fits(bytes: number): boolean {
    return this.held + bytes <= this.limit;
  }

  /** Takes `bytes` when they fit and answers whether it did; nothing is taken otherwise. */
  take(bytes: number): boolean {
    if (!this.fits(bytes)) return false;
    this.held += bytes;
    return true;
  }

  give(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
  }
}
