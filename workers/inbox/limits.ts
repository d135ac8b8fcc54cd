import { tmpdir } from 'node:os';
import type { Config } from '../../core/config';
import type { AdmissionLimits } from './admission';

/** Everything the inbound listener bounds (README, Configuration; docs/inboxes.md, Limits). */
export interface InboundLimits extends AdmissionLimits {
  maxMessageBytes: number;
  /** Connections held at once over every client; the next is answered 421. */
  maxConnections: number;
  /** Message bytes received and not yet stored, over every session of the process. */
  maxBytesInFlight: number;
  spoolDir: string;
  maxMimeParts: number;
  maxAttachments: number;
  /** Raw received mail one workspace may hold. */
  storageQuotaBytes: number;
}

export function inboundLimits(config: Config): InboundLimits {
  return {
    maxMessageBytes: config.INBOUND_MAX_MESSAGE_BYTES,
    maxConnections: config.INBOUND_MAX_CONNECTIONS,
    connectionsPerIp: config.INBOUND_MAX_CONNECTIONS_PER_IP,
    connectionsPerIpPerMinute: config.INBOUND_CONNECTIONS_PER_IP_PER_MINUTE,
    messagesPerIpPerMinute: config.INBOUND_MESSAGES_PER_IP_PER_MINUTE,
    maxBytesInFlight: config.INBOUND_MAX_BYTES_IN_FLIGHT,
    spoolDir: config.INBOUND_SPOOL_DIR ?? tmpdir(),
    maxMimeParts: config.INBOUND_MAX_MIME_PARTS,
    maxAttachments: config.INBOUND_MAX_ATTACHMENTS,
    storageQuotaBytes: config.INBOUND_STORAGE_QUOTA_BYTES,
  };
}
