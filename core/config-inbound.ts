import { z } from 'zod';

/**
 * The inbound MX's settings (workers/inbox/), part of the one configuration schema (core/config.ts spreads
 * them in): its address, STARTTLS, and the limits that keep a flood of senders from taking the process's
 * sockets, memory, disk and database pool from real mail (docs/inboxes.md, Limits).
 */
export const inboundListenerSettings = {
  INBOUND_SMTP_PORT: z.coerce.number().int().min(0).max(65535).default(2525),
  /**
   * The address the inbound SMTP listener binds to. Loopback by default, so a development machine does not
   * take mail from its network; a deployment that receives mail sets `0.0.0.0` (or its public address).
   */
  INBOUND_SMTP_HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * PEM files of the listener's certificate and key: with both set it offers STARTTLS (senders that find no
   * STARTTLS deliver in clear, as SMTP allows); set neither or both.
   */
  INBOUND_TLS_CERT_PATH: z.string().min(1).optional(),
  INBOUND_TLS_KEY_PATH: z.string().min(1).optional(),
  /**
   * Largest inbound message, raw MIME: announced in EHLO (SIZE) and refused with 552 past it. 40 MB takes
   * 25 MB of attachments after base64, as outbound does (MAX_SEND_BODY_BYTES).
   */
  INBOUND_MAX_MESSAGE_BYTES: z.coerce.number().int().positive().default(40 * 1024 * 1024),
  /**
   * Open SMTP connections the listener holds at once; the next is answered 421 (try later), which every sending
   * server handles. Each session may hold a database connection at RCPT and DATA, so a flood of idle senders
   * must not be able to take the process's sockets and pool from real mail.
   */
  INBOUND_MAX_CONNECTIONS: z.coerce.number().int().positive().default(500),
  // The inbound listener's per-sender and per-workspace limits (issue 29; docs/inboxes.md, Limits).
  /** Connections one client address (an IPv6 /64) holds at once; the next is answered 421. */
  INBOUND_MAX_CONNECTIONS_PER_IP: z.coerce.number().int().positive().default(20),
  /** New connections one client address may open per minute; past it 421 until the minute has passed. */
  INBOUND_CONNECTIONS_PER_IP_PER_MINUTE: z.coerce.number().int().positive().default(120),
  /** Messages (MAIL FROM) one client address may start per minute; past it 450 4.7.1, so its queue retries. */
  INBOUND_MESSAGES_PER_IP_PER_MINUTE: z.coerce.number().int().positive().default(300),
  /**
   * Message bytes received and not yet stored, over every session of the process (each session spools DATA to
   * a file, never to memory). Past it a new message is answered 452 4.3.1 (try later), not a crash or a full disk.
   */
  INBOUND_MAX_BYTES_IN_FLIGHT: z.coerce.number().int().positive().default(2 * 1024 * 1024 * 1024),
  /** Where sessions spool DATA; the system's temporary directory when unset. */
  INBOUND_SPOOL_DIR: z.string().min(1).optional(),
  /** MIME parts (every node, multiparts included) and attachments one message may have; past either 552 5.3.4. */
  INBOUND_MAX_MIME_PARTS: z.coerce.number().int().positive().default(500),
  INBOUND_MAX_ATTACHMENTS: z.coerce.number().int().positive().default(100),
  /** Raw received mail a workspace may hold (GET /usage, `inboundStorage`); past it 452 4.2.2. 10 GiB by default. */
  INBOUND_STORAGE_QUOTA_BYTES: z.coerce.number().int().positive().default(10 * 1024 * 1024 * 1024),
  /** How long the listener trusts a cached recipient or rule set when no change notification arrived. */
  INBOUND_RECIPIENT_CACHE_TTL_MS: z.coerce.number().int().min(0).default(60_000),
};
