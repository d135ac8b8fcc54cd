import { type Client, WorkflowExecutionAlreadyStartedError, WorkflowFailedError } from '@temporalio/client';
import type { Logger } from 'pino';
import { VERIFICATION_WINDOW_MS } from '../../core/domain-status';
import { AppError } from '../../core/errors';
import { withDeadline } from '../../temporal/deadline';
import { startDomainCheckWorkflow, startDomainVerificationWorkflow } from '../../temporal/domains';

export interface DomainVerificationOptions {
  temporal: Client;
  taskQueuePrefix: string;
  logger: Logger;
  /** How long a start may take before the request gives up on Temporal. */
  startTimeoutMs?: number;
  /** How long `POST /domains/:id/verify` waits for the check (DNS lookups, and SES when it sends). */
  checkTimeoutMs?: number;
}

export interface DomainRef {
  workspaceId: string;
  id: string;
}

/**
 * The API's side of domain verification: DNS lookups and the SES call are activities, so the API starts
 * workflows (temporal/domains.ts) and, for a verify request, waits for one.
 */
export function createDomainVerification(options: DomainVerificationOptions) {
  const { temporal, taskQueuePrefix } = options;
  const startTimeoutMs = options.startTimeoutMs ?? 3_000;
  const checkTimeoutMs = options.checkTimeoutMs ?? 30_000;

  return {
    /**
     * Starts the domain's background verification with a new 72-hour window, unless one is running. Never
     * throws: a domain must be creatable while Temporal is down, and the watchdog starts what is missed here.
     */
    async watch(domain: DomainRef): Promise<void> {
      try {
        await withDeadline(temporal, startTimeoutMs, () =>
          startDomainVerificationWorkflow(temporal, taskQueuePrefix, {
            workspaceId: domain.workspaceId,
            domainId: domain.id,
            checkUntil: new Date(Date.now() + VERIFICATION_WINDOW_MS),
          }),
        );
      } catch (error) {
        if (error instanceof WorkflowExecutionAlreadyStartedError) return;
        options.logger.warn({ err: error, domainId: domain.id }, 'domain verification not started; the watchdog will start it');
      }
    },

    /** Runs a check now and waits for it; the verdict is stored on the domain. */
    async checkNow(domain: DomainRef): Promise<void> {
      const handle = await withDeadline(temporal, startTimeoutMs, () =>
        startDomainCheckWorkflow(temporal, taskQueuePrefix, { workspaceId: domain.workspaceId, domainId: domain.id }),
      ).catch((error: unknown) => {
        options.logger.warn({ err: error, domainId: domain.id }, 'domain check not started');
        throw new AppError('service_unavailable', 'Domain checks run on the background workers, which cannot be reached right now. Try again in a minute.');
      });
      await withDeadline(temporal, checkTimeoutMs, () => handle.result()).catch((error: unknown) => {
        options.logger.warn({ err: error, domainId: domain.id }, 'domain check did not complete');
        throw new AppError(
          'service_unavailable',
          error instanceof WorkflowFailedError
            ? 'The check could not complete (the database or the email provider did not answer); it is retried in the background.'
            : 'The check is taking longer than expected; its result will show on GET /domains/:id.',
        );
      });
    },
  };
}

export type DomainVerification = ReturnType<typeof createDomainVerification>;
