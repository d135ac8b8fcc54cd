#!/usr/bin/env node
import { outputFor, type GlobalOptions } from './context';
import { reportError } from './errors';
import { buildProgram } from './program';

async function main(): Promise<void> {
  const program = buildProgram(process.env);
  try {
    await program.parseAsync(process.argv);
  } catch (error) {
    // Usage errors (an unknown option, a missing argument) were printed by commander, which set the exit code.
    process.exitCode = reportError(error, outputFor(program.opts<GlobalOptions>(), process.env));
  }
}

void main();
