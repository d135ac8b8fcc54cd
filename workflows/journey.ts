import type { EnrollmentEnd, JourneyWorkflowInput } from './journey-signals';

/** The journey of one enrollment (docs/journeys.md). Being built: see issue 15. */
export async function journeyWorkflow(input: JourneyWorkflowInput): Promise<EnrollmentEnd> {
  throw new Error(`journey of ${input.enrollmentId}: not built yet`);
}
