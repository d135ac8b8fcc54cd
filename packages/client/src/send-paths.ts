import type { components, paths } from './schema';

type Schemas = components['schemas'];

/** A body whose idempotencyKey the client fills in when absent (see idempotency.ts). */
type KeyOptional<Body> = Body extends { idempotencyKey: string } ? Omit<Body, 'idempotencyKey'> & { idempotencyKey?: string } : Body;

/** POST /emails: the send input, idempotencyKey optional (generated unless given). */
export type SendEmailInput = KeyOptional<Schemas['SendEmail']>;
/** POST /messages: the unified send over email, WhatsApp and Telegram, idempotencyKey optional. */
export type SendMessageInput = KeyOptional<Schemas['SendMessage']>;
/**
 * POST /emails/batch. The document leaves the items untyped (the service validates each on its own, so one
 * bad item fails alone); here each is a send input, as the spec says.
 */
export interface SendEmailBatchInput {
  emails: SendEmailInput[];
}

type WithJsonBody<Operation, Body> = Omit<Operation, 'requestBody'> & { requestBody: { content: { 'application/json': Body } } };
type WithPost<PathItem extends { post: unknown }, Body> = Omit<PathItem, 'post'> & { post: WithJsonBody<PathItem['post'], Body> };

/**
 * The document's paths as the client takes them: identical, except that the sends' idempotencyKey is
 * optional (the client generates one) and batch items are typed.
 */
export type MessagingPaths = Omit<paths, '/api/v1/emails' | '/api/v1/emails/batch' | '/api/v1/messages'> & {
  '/api/v1/emails': WithPost<paths['/api/v1/emails'], SendEmailInput>;
  '/api/v1/emails/batch': WithPost<paths['/api/v1/emails/batch'], SendEmailBatchInput>;
  '/api/v1/messages': WithPost<paths['/api/v1/messages'], SendMessageInput>;
};
