import { createInterface } from 'node:readline/promises';

/**
 * Asks a yes/no question on the terminal; only y or yes (any case) is a yes, so Enter, n or anything else
 * declines, and so do Ctrl-C and Ctrl-D: without a listener readline would only pause on Ctrl-C, the event
 * loop would empty and the process would end with exit 0 as if all went well. The question goes to stderr so
 * stdout keeps only the command's result.
 */
export async function confirm(question: string): Promise<boolean> {
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await new Promise<boolean>((resolve) => {
      prompt.once('SIGINT', () => {
        process.stderr.write('\n');
        resolve(false);
      });
      prompt.once('close', () => resolve(false));
      prompt.question(`${question} [y/N] `).then(
        (answer) => resolve(/^y(es)?$/i.test(answer.trim())),
        () => resolve(false),
      );
    });
  } finally {
    prompt.close();
  }
}
