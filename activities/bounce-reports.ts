import { simpleParser } from 'mailparser';
import type { ReportMail } from '../core/bounces/reports';

/** Report parts kept as text for core/bounces/reports.ts; other attachments are not read. */
const REPORT_PARTS = new Set(['message/delivery-status', 'message/feedback-report', 'text/rfc822-headers', 'message/rfc822']);

/**
 * Decodes a bounce or complaint mail with mailparser into the parts the report parser reads. Delivery
 * status parts are kept apart from the text (`keepDeliveryStatus`), where mailparser would otherwise merge
 * them into the readable body.
 */
export async function readReportMail(raw: Buffer): Promise<ReportMail> {
  const parsed = await simpleParser(raw, { keepDeliveryStatus: true, skipImageLinks: true, skipTextToHtml: true });
  const contentType = parsed.headers.get('content-type');
  const params: Record<string, unknown> = contentType && typeof contentType === 'object' && 'params' in contentType ? { ...contentType.params } : {};
  const reportType = params['report-type'];
  return {
    subject: parsed.subject ?? '',
    text: parsed.text ?? '',
    reportType: typeof reportType === 'string' ? reportType.toLowerCase() : null,
    parts: parsed.attachments
      .filter((attachment) => REPORT_PARTS.has(attachment.contentType.toLowerCase()))
      .map((attachment) => ({ contentType: attachment.contentType.toLowerCase(), content: attachment.content.toString('utf8') })),
  };
}
