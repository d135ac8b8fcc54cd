/** Starts enrollments whose journey never started and matches unmatched events (docs/journeys.md). Being built: see issue 15. */
export async function journeySweeperWorkflow(input: Record<string, never>): Promise<void> {
  throw new Error(`journey sweeper ${JSON.stringify(input)}: not built yet`);
}
