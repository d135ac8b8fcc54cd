import { AppError } from '../errors';
import type { Channel } from '../identities';
import { parseDuration } from './durations';
import { parseLiquid } from '../templates/liquid';
import { type EventMatch, type JourneyGraph, successors } from './graph';
import { type GraphInput, type NodeInput, normalizeNode } from './graph-schema';

/** A problem with one place of a definition: the field path (`graph.nodes[2].next`) and what is wrong. */
export interface DefinitionIssue {
  path: string;
  message: string;
}

const nodePath = (index: number, field?: string) => `graph.nodes[${index}]${field ? `.${field}` : ''}`;

/** Why a content variable's Liquid (`{{ contact.firstName }}`) cannot render, or null. */
function liquidProblem(value: string): string | null {
  try {
    parseLiquid(value, 'text', 'contentVariables');
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : 'not valid Liquid';
  }
}

/** Per-node checks that need no other node: durations, the wait's moment, the message's channels. */
function nodeIssues(node: NodeInput, index: number): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  const at = (field: string, message: string) => issues.push({ path: nodePath(index, field), message: `Node "${node.id}": ${message}` });
  if (node.type === 'wait') {
    if (node.duration === undefined && node.until === undefined && node.atLocalTime === undefined) {
      at('duration', 'a wait needs a duration, an until or an atLocalTime');
    }
    if (node.until !== undefined && (node.duration !== undefined || node.atLocalTime !== undefined)) {
      at('until', 'until names a moment of its own: give it alone');
    }
    if (node.duration !== undefined && parseDuration(node.duration) === null) {
      at('duration', 'expected seconds or an ISO 8601 duration in weeks, days, hours, minutes or seconds (P3D, PT12H), up to a year');
    }
  }
  if (node.type === 'wait_for_event' && parseDuration(node.timeout) === null) {
    at('timeout', 'expected seconds or an ISO 8601 duration in weeks, days, hours, minutes or seconds (P3D, PT12H), up to a year');
  }
  if (node.type === 'message') {
    const channels: Channel[] = [node.preferredChannel, ...node.fallbackChain];
    if (new Set(channels).size !== channels.length) at('fallbackChain', 'a channel appears twice (the preferred channel counts)');
    for (const channel of channels) {
      if (!node.templateByChannel[channel]) at(`templateByChannel.${channel}`, `no template for ${channel}, which the message may go out on`);
    }
    if (node.contentSid !== undefined && !channels.includes('whatsapp')) at('contentSid', 'a content template is for whatsapp, which this message does not go out on');
    if (node.contentVariables !== undefined && node.contentSid === undefined) at('contentVariables', 'content variables need a contentSid');
    for (const [key, value] of Object.entries(node.contentVariables ?? {})) {
      const problem = liquidProblem(value);
      if (problem) at(`contentVariables.${key}`, problem);
    }
  }
  return issues;
}

/**
 * The checks of a journey graph as a whole (spec/decisions.md): ids unique, `entry` and every `next`
 * existing, every node reachable from `entry`, no cycle. Each issue names the node it is about.
 */
export function graphIssues(graph: GraphInput): DefinitionIssue[] {
  const issues: DefinitionIssue[] = graph.nodes.flatMap(nodeIssues);
  const index = new Map<string, number>();
  graph.nodes.forEach((node, i) => {
    if (index.has(node.id)) issues.push({ path: nodePath(i, 'id'), message: `Node "${node.id}": the id is used by another node` });
    else index.set(node.id, i);
  });
  if (!index.has(graph.entry)) issues.push({ path: 'graph.entry', message: `entry "${graph.entry}" is not a node` });
  graph.nodes.forEach((node, i) => {
    for (const { field, id } of successors(node)) {
      if (id !== null && !index.has(id)) issues.push({ path: nodePath(i, field), message: `Node "${node.id}": ${field} "${id}" is not a node` });
    }
  });
  if (issues.length > 0) return issues;

  // Depth-first from the entry: a node met again while still on the path closes a cycle.
  const state = new Map<string, 'open' | 'done'>();
  const visit = (id: string): void => {
    state.set(id, 'open');
    const i = index.get(id) as number;
    for (const { field, id: next } of successors(graph.nodes[i])) {
      if (next === null) continue;
      if (state.get(next) === 'open') issues.push({ path: nodePath(i, field), message: `Node "${id}": ${field} "${next}" closes a cycle` });
      else if (!state.has(next)) visit(next);
    }
    state.set(id, 'done');
  };
  visit(graph.entry);
  graph.nodes.forEach((node, i) => {
    if (!state.has(node.id)) issues.push({ path: nodePath(i), message: `Node "${node.id}" cannot be reached from the entry "${graph.entry}"` });
  });
  return issues;
}

/** The issues as the spec's 422 body: each path a field, its messages the field's errors. */
export function definitionError(issues: readonly DefinitionIssue[]): AppError {
  const fieldErrors: Record<string, string[]> = {};
  for (const issue of issues) (fieldErrors[issue.path] ??= []).push(issue.message);
  return AppError.validation({ formErrors: [], fieldErrors });
}

/** A checked graph, normalized for publication (durations in milliseconds); 422 naming the bad nodes otherwise. */
export function checkedGraph(graph: GraphInput): JourneyGraph {
  const issues = graphIssues(graph);
  if (issues.length > 0) throw definitionError(issues);
  return { entry: graph.entry, nodes: graph.nodes.map(normalizeNode) };
}

/** The event names a version reacts to while enrollments run: its goal's and its wait_for_event nodes'. */
export function listenedEvents(graph: JourneyGraph, goal: EventMatch | null): string[] {
  const names = new Set<string>(goal ? [goal.event] : []);
  for (const node of graph.nodes) if (node.type === 'wait_for_event') names.add(node.event);
  return [...names];
}

/** The templates a graph's message nodes name, so the caller can check they exist in the workspace. */
export function templateIdsOf(graph: GraphInput | JourneyGraph): Array<{ nodeIndex: number; channel: Channel; templateId: string }> {
  return graph.nodes.flatMap((node, nodeIndex) =>
    node.type === 'message'
      ? Object.entries(node.templateByChannel).map(([channel, templateId]) => ({ nodeIndex, channel: channel as Channel, templateId: templateId as string }))
      : [],
  );
}

/**
 * Message nodes that may go out on WhatsApp with free-form text only (no contentSid): activation warns rather
 * than refuses (docs/journeys.md), since a contact who wrote within 24 hours is reached; any other contact
 * is passed over for the next channel, or the step is skipped `outside_whatsapp_window`.
 */
export function whatsAppWindowWarnings(graph: GraphInput | JourneyGraph): DefinitionIssue[] {
  return graph.nodes.flatMap((node, index) => {
    if (node.type !== 'message' || node.contentSid !== undefined) return [];
    if (node.preferredChannel !== 'whatsapp' && !node.fallbackChain.includes('whatsapp')) return [];
    return [{
      path: nodePath(index, 'contentSid'),
      message: `Node "${node.id}": WhatsApp without a content template reaches only contacts who wrote within the last 24 hours; others are passed over (outside_whatsapp_window)`,
    }];
  });
}
