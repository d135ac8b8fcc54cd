import type { AudienceRules } from '../audience-rules';
import type { Channel } from '../identities';

/**
 * The journey graph of a published automation version, as the journey workflow interprets it: durations
 * in milliseconds, so the workflow parses nothing (the input shape and its normalization are in
 * ./graph-schema.ts). Only type imports here: the workflow bundle reaches this file.
 */

export interface EventMatch {
  event: string;
  match: Record<string, string>;
}

export interface MessageNode {
  id: string;
  type: 'message';
  label?: string;
  preferredChannel: Channel;
  fallbackChain: Channel[];
  templateByChannel: Partial<Record<Channel, string>>;
  attachmentIds: string[];
  from?: string;
  /** WhatsApp's content template outside the contact's 24-hour window (./graph-schema.ts). */
  contentSid?: string;
  contentVariables?: Record<string, string>;
  next: string | null;
}

export interface WaitNode {
  id: string;
  type: 'wait';
  label?: string;
  durationMs?: number;
  until?: string;
  atLocalTime?: string;
  next: string | null;
}
export interface WaitForEventNode {
  id: string;
  type: 'wait_for_event';
  label?: string;
  event: string;
  match: Record<string, string>;
  timeoutMs: number;
  onEvent: string | null;
  onTimeout: string | null;
}
export interface BranchNode {
  id: string;
  type: 'branch';
  label?: string;
  condition: AudienceRules;
  then: string | null;
  else: string | null;
}
export interface ExitNode {
  id: string;
  type: 'exit';
  label?: string;
}
export type JourneyNode = MessageNode | WaitNode | WaitForEventNode | BranchNode | ExitNode;
export type NodeType = JourneyNode['type'];

export interface JourneyGraph {
  entry: string;
  nodes: JourneyNode[];
}

/**
 * A node's links, whether published (JourneyNode) or as written (./graph-schema.ts `NodeInput`, which has the
 * same link fields): named here rather than imported, since ./graph-schema.ts imports this file.
 */
export type NodeLinks =
  | { type: 'message' | 'wait'; next: string | null }
  | { type: 'wait_for_event'; onEvent: string | null; onTimeout: string | null }
  | { type: 'branch'; then: string | null; else: string | null }
  | { type: 'exit' };

/** The ids a node may go on to, in order, with the name of the field each comes from. */
export function successors(node: NodeLinks): Array<{ field: string; id: string | null }> {
  switch (node.type) {
    case 'message':
    case 'wait':
      return [{ field: 'next', id: node.next }];
    case 'wait_for_event':
      return [{ field: 'onEvent', id: node.onEvent }, { field: 'onTimeout', id: node.onTimeout }];
    case 'branch':
      return [{ field: 'then', id: node.then }, { field: 'else', id: node.else }];
    case 'exit':
      return [];
  }
}

/** Whether an event's properties carry every matched value exactly (numbers and booleans as their text). */
export function matchesEvent(want: { event: string; match: Record<string, string> }, event: { name: string; properties: Record<string, unknown> }): boolean {
  if (want.event !== event.name) return false;
  return Object.entries(want.match).every(([key, value]) => {
    const actual = event.properties[key];
    return (typeof actual === 'string' || typeof actual === 'number' || typeof actual === 'boolean') && String(actual) === value;
  });
}

/** What an event matched in one enrollment's version: its goal, and the wait_for_event nodes it would end. */
export interface EventMatched {
  goal: boolean;
  nodeIds: string[];
}

/**
 * Matches an event against a version's goal and wait_for_event nodes where its properties are (the API,
 * the sweeper), so the journey is told only what matched and never sees the properties themselves.
 */
export function matchedInVersion(version: { goal: EventMatch | null; graph: JourneyGraph }, event: { name: string; properties: Record<string, unknown> }): EventMatched {
  return {
    goal: version.goal !== null && matchesEvent(version.goal, event),
    nodeIds: version.graph.nodes.filter((node) => node.type === 'wait_for_event' && matchesEvent(node, event)).map((node) => node.id),
  };
}

/** A node by id; the graph was checked at publication, so a missing one is a bug. */
export function nodeById(graph: JourneyGraph, id: string): JourneyNode {
  const node = graph.nodes.find((candidate) => candidate.id === id);
  if (!node) throw new Error(`Journey node ${id} is not in the graph`);
  return node;
}

/** What a node is called in a contact's journey: its label, else its type in words. */
export function nodeLabelOf(node: JourneyNode, subject?: string | null): string {
  if (node.label) return node.label;
  if (node.type === 'message' && subject) return subject;
  return node.type.replace(/_/g, ' ');
}

/** The step a journey records as it reaches a node (where the contact is now, shown in its journey). */
export function journeyStepOf(node: JourneyNode): { nodeId: string; nodeType: NodeType; label: string } {
  return { nodeId: node.id, nodeType: node.type, label: nodeLabelOf(node) };
}
