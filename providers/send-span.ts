import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';

const tracer = trace.getTracer('messaging-providers');

/** What a provider span says about its send: never an address, a subject or content. */
export interface SendSpanAttributes {
  provider: string;
  channel: 'email' | 'whatsapp' | 'telegram';
  messageId: string | undefined;
}

/**
 * The provider call as a span (`<provider> send`), the child of the delivery activity's span when tracing is
 * on (docs/observability.md, Traces). A failure marks it with the error's class only: provider refusals quote
 * addresses and phone numbers, so their messages stay out of traces. With tracing off this is the facade's
 * no-op span around the call.
 */
export function inSendSpan<T>(attributes: SendSpanAttributes, send: () => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(
    `${attributes.provider} send`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'messaging.system': attributes.provider,
        'messaging.channel': attributes.channel,
        ...(attributes.messageId && { 'messaging.message.id': attributes.messageId }),
      },
    },
    async (span) => {
      try {
        return await send();
      } catch (error) {
        const type = error instanceof Error ? error.name : 'Error';
        span.setAttribute('error.type', type);
        span.setStatus({ code: SpanStatusCode.ERROR, message: type });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}
