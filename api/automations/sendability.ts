import type { Sequelize } from 'sequelize';
import type { Channel } from '../../core/identities';
import type { GraphInput } from '../../core/journeys/graph-schema';
import { ATTACHMENT_LIMITS } from '../../core/attachments';
import { type DefinitionIssue, templateIdsOf } from '../../core/journeys/validation';
import { findAttachments } from '../../db/repositories/attachments';
import { defaultSender } from '../../db/repositories/journey-messages';
import { findTemplate } from '../../db/repositories/templates';
import { authorizeSender, type VerifiedDomainLookup } from '../../core/sender-authorization';

/**
 * Whether a journey's message nodes can send, checked where the user is (the API's 422 naming the node)
 * rather than found out at run time, when the enrollment would skip the step or the delivery would fail.
 */
export interface SendabilityDeps {
  db: Sequelize;
  verifiedDomain: VerifiedDomainLookup;
}

const nodeIssue = (graph: GraphInput, nodeIndex: number, field: string, message: string): DefinitionIssue => ({
  path: `graph.nodes[${nodeIndex}].${field}`,
  message: `Node "${graph.nodes[nodeIndex].id}": ${message}`,
});

/** Every template a graph's message nodes name exists in the workspace (not deleted) and serves that channel. */
export async function templateIssues(deps: SendabilityDeps, workspaceId: string, graph: GraphInput): Promise<DefinitionIssue[]> {
  const uses = templateIdsOf(graph);
  const ids = [...new Set(uses.map((use) => use.templateId))];
  const found = new Map(await Promise.all(ids.map(async (id) => [id, await findTemplate(deps.db, workspaceId, id)] as const)));
  return uses.flatMap(({ nodeIndex, channel, templateId }) => {
    const template = found.get(templateId);
    const field = `templateByChannel.${channel}`;
    if (!template) return [nodeIssue(graph, nodeIndex, field, `no template ${templateId} in the workspace`)];
    if (!(template.channels as string[]).includes(channel)) return [nodeIssue(graph, nodeIndex, field, `template ${templateId} does not serve ${channel}`)];
    return [];
  });
}

/**
 * Each email message node's sender is authorized (core/sender-authorization.ts): a `from` whose domain is
 * not a verified domain of this workspace is refused on create, update and activate. A node without `from`
 * takes the workspace's default sender when it runs; with `requireSender` (activation), a workspace that has
 * none is refused too, since every enrollment would otherwise skip the step.
 */
export async function senderIssues(
  deps: SendabilityDeps,
  workspaceId: string,
  graph: GraphInput,
  options: { requireSender: boolean },
): Promise<DefinitionIssue[]> {
  const issues: DefinitionIssue[] = [];
  let fallbackSender: Promise<unknown> | undefined;
  for (const [nodeIndex, node] of graph.nodes.entries()) {
    if (node.type !== 'message') continue;
    const channels: Channel[] = [node.preferredChannel, ...node.fallbackChain];
    if (!channels.includes('email')) continue;
    if (node.from !== undefined) {
      const verdict = await authorizeSender(deps.verifiedDomain, workspaceId, node.from);
      if (!verdict.ok) issues.push(nodeIssue(graph, nodeIndex, 'from', verdict.message));
    } else if (options.requireSender && !(await (fallbackSender ??= defaultSender(deps.db, workspaceId)))) {
      issues.push(nodeIssue(graph, nodeIndex, 'from', 'no sender: give from, or a default sender (defaultFromAddress) on a verified domain'));
    }
  }
  return issues;
}

/**
 * Each attachment a message node names exists in this workspace, is not deleted and is uploaded (a pending
 * one is refused at creation too: a journey only attaches ready files, db/repositories/journey-messages.ts,
 * so it would be left out of every message without a word), and the node's files together stay within the
 * 25 MB a message may carry. Checked on create, update and activate; a replaced file is checked against the
 * live journeys that attach it (db/attachment-files.ts `replaceFile`).
 */
export async function attachmentIssues(deps: SendabilityDeps, workspaceId: string, graph: GraphInput): Promise<DefinitionIssue[]> {
  const ids = [...new Set(graph.nodes.flatMap((node) => (node.type === 'message' ? node.attachmentIds : [])))];
  const found = new Map((await findAttachments(deps.db, workspaceId, ids)).map((attachment) => [attachment.id, attachment]));
  const issues: DefinitionIssue[] = [];
  for (const [nodeIndex, node] of graph.nodes.entries()) {
    if (node.type !== 'message') continue;
    let total = 0;
    for (const [position, id] of node.attachmentIds.entries()) {
      const attachment = found.get(id);
      const field = `attachmentIds[${position}]`;
      if (!attachment || attachment.status === 'deleted') issues.push(nodeIssue(graph, nodeIndex, field, `no attachment ${id} in the workspace`));
      else if (attachment.status !== 'ready') issues.push(nodeIssue(graph, nodeIndex, field, `attachment ${id} is not uploaded yet: upload it, then POST /attachments/${id}/confirm`));
      else total += attachment.size;
    }
    if (total > ATTACHMENT_LIMITS.messageBytes) {
      issues.push(nodeIssue(graph, nodeIndex, 'attachmentIds', `the files total ${total} bytes; a message carries at most ${ATTACHMENT_LIMITS.messageBytes} (25 MB)`));
    }
  }
  return issues;
}
