/**
 * Who an enroll request names (AutomationEnrollRequest: exactly one of them). Shared by the API that
 * accepts it, the enroll workflow that carries it and the repository that pages through it.
 */
export type EnrollAudience = { listId: string } | { segmentId: string } | { contactIds: string[] };
