import { createInterface } from 'node:readline/promises';

/**
 * Asks a yes/no question on the terminal; only y or yes (any case) is a yes, so Enter, n or anything else
 * declines. The question goes to stderr so stdout keeps only the command's result.
 */
export async function confirm(question: string): Promise<boolean> {
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await prompt.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    prompt.close();
  }
}
