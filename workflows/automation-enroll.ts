/** Who an enroll request names (AutomationEnrollRequest: exactly one of them). */
export type EnrollAudience = { listId: string } | { segmentId: string } | { contactIds: string[] };

export interface AutomationEnrollInput {
  workspaceId: string;
  automationId: string;
  /** The id POST /automations/:id/enroll answered; names the workflow. */
  requestId: string;
  audience: EnrollAudience;
  /** Contacts enrolled so far (a position in the audience's order), carried across continue-as-new. */
  cursor?: string | null;
}

/** Enrolls an audience in pages (docs/journeys.md). Being built: see issue 15. */
export async function automationEnrollWorkflow(input: AutomationEnrollInput): Promise<number> {
  throw new Error(`enroll ${input.requestId}: not built yet`);
}
