import type { Response } from 'express';

/**
 * Resolves when the client has taken what was written (a streamed export waits here, so a slow reader
 * holds one page in memory, not the export); rejects if it went away first, which ends the export.
 */
export function drained(res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    const onDrain = () => {
      res.off('close', onClose);
      resolve();
    };
    const onClose = () => {
      res.off('drain', onDrain);
      reject(new Error('The client closed the export'));
    };
    res.once('drain', onDrain).once('close', onClose);
  });
}
