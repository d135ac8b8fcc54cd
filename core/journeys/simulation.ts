import type { Channel } from '../identities';
import { type DeferReason, type JourneySettings, nextAllowedMoment, type RecentSend } from './delivery-window';
import { type BranchNode, type EventMatch, type JourneyGraph, type JourneyNode, matchesEvent, nodeById, nodeLabelOf, type WaitNode } from './graph';
import { nextLocalTime } from './local-time';

/**
 * A journey run under a fake clock (POST /automations/:id/simulate): the graph interpreted as the journey
 * workflow interprets it, with the caller's events as the only signals, and nothing sent or written.
 * Pure: what needs the database (the contact's addresses, a branch's rule evaluated in SQL, the renders)
 * comes in as plain values and functions, and the caller renders the planned messages afterwards.
 *
 * Timing rules, as in the workflow:
 * - the goal listens from the start: an event matching it at or after `startAt` ends the run
 *   `goal_reached` at its moment, whatever node is waiting then (a wait, a wait_for_event, a message
 *   held back by quiet hours or a cap);
 * - a wait_for_event takes an event that arrives after it was entered and before its timeout; an event
 *   is taken once (a signal is consumed), and the goal wins over a wait taking the same moment;
 * - a message whose channels reach no address is skipped, and the journey goes on.
 */

export interface SimulatedEvent {
  name: string;
  properties: Record<string, unknown>;
  at: Date;
}

export type StepOutcome = 'sent' | 'unreachable' | 'waited' | 'event' | 'timeout' | 'then' | 'else' | 'exit' | 'goal_reached';

export interface SimulatedStep {
  nodeId: string;
  nodeType: JourneyNode['type'];
  label: string;
  /** When the run entered the node. */
  at: Date;
  outcome: StepOutcome;
}

export interface PlannedMessage {
  nodeId: string;
  channel: Channel;
  to: string;
  templateId: string;
  /** When it would go out: after quiet hours and frequency caps. */
  at: Date;
  deferred?: { from: Date; reason: DeferReason };
}

export type SimulationOutcome =
  | { status: 'completed'; exitReason: 'completed' | 'exit_node'; at: Date }
  | { status: 'exited'; exitReason: 'goal_reached'; at: Date };

export interface SimulationRun {
  path: SimulatedStep[];
  messages: PlannedMessage[];
  outcome: SimulationOutcome;
}

export interface SimulationInput {
  graph: JourneyGraph;
  goal: EventMatch | null;
  startAt: Date;
  events: readonly SimulatedEvent[];
  settings: JourneySettings;
  /** The contact's zone (contactTimeZone of delivery-window.ts). */
  timeZone: string;
  /** The contact's marketing messages before the run, as the caps count them. */
  recentSends: readonly RecentSend[];
  /** The address a channel reaches the contact on, null when it reaches none. */
  reach: (channel: Channel) => string | null;
  /** The branch's rule for the contact at that moment. */
  branch: (node: BranchNode, at: Date) => boolean;
}

/** When a wait node entered at `now` ends. */
export function waitEnd(node: WaitNode, now: Date, timeZone: string): Date {
  if (node.until !== undefined) {
    const until = new Date(node.until);
    return until.getTime() > now.getTime() ? until : now;
  }
  let end = new Date(now.getTime() + (node.durationMs ?? 0));
  if (node.atLocalTime !== undefined) end = nextLocalTime(end, timeZone, node.atLocalTime);
  return end;
}

export function simulateJourney(input: SimulationInput): SimulationRun {
  const events = [...input.events].sort((a, b) => a.at.getTime() - b.at.getTime());
  const goalAt = input.goal ? events.find((event) => event.at.getTime() >= input.startAt.getTime() && matchesEvent(input.goal as EventMatch, event))?.at ?? null : null;
  const consumed = new Set<SimulatedEvent>();
  const recent: RecentSend[] = [...input.recentSends];
  const path: SimulatedStep[] = [];
  const messages: PlannedMessage[] = [];
  let clock = input.startAt;

  /** Whether the goal is reached by `until` (inclusive): the run then ends at the goal's moment. */
  const goalBy = (until: Date) => goalAt !== null && goalAt.getTime() <= until.getTime();
  const goalReached = (): SimulationRun => ({ path, messages, outcome: { status: 'exited', exitReason: 'goal_reached', at: goalAt as Date } });

  let nodeId: string | null = input.graph.entry;
  while (nodeId !== null) {
    if (goalBy(clock)) return goalReached();
    // A checked graph is acyclic, so no node comes twice; a stored graph that loops must not hang the API.
    if (path.length > input.graph.nodes.length) throw new Error('The journey graph has a cycle');
    const node = nodeById(input.graph, nodeId);
    const step: SimulatedStep = { nodeId: node.id, nodeType: node.type, label: nodeLabelOf(node), at: clock, outcome: 'exit' };
    path.push(step);
    switch (node.type) {
      case 'message': {
        const channel = [node.preferredChannel, ...node.fallbackChain].find((candidate) => input.reach(candidate) !== null);
        if (channel === undefined) {
          step.outcome = 'unreachable';
          nodeId = node.next;
          break;
        }
        const held = nextAllowedMoment(clock, channel, input.settings, input.timeZone, recent);
        if (held && goalBy(held.at)) {
          step.outcome = 'goal_reached';
          return goalReached();
        }
        const at = held ? held.at : clock;
        messages.push({
          nodeId: node.id,
          channel,
          to: input.reach(channel) as string,
          templateId: node.templateByChannel[channel] as string,
          at,
          ...(held && { deferred: { from: clock, reason: held.reason } }),
        });
        recent.push({ channel, at });
        clock = at;
        step.outcome = 'sent';
        nodeId = node.next;
        break;
      }
      case 'wait': {
        const end = waitEnd(node, clock, input.timeZone);
        if (goalBy(end)) {
          step.outcome = 'goal_reached';
          return goalReached();
        }
        clock = end;
        step.outcome = 'waited';
        nodeId = node.next;
        break;
      }
      case 'wait_for_event': {
        const deadline = clock.getTime() + node.timeoutMs;
        const entered = clock.getTime();
        const arrived = events.find(
          (event) => !consumed.has(event) && event.at.getTime() >= entered && event.at.getTime() < deadline && matchesEvent(node, event),
        );
        const end = arrived ? arrived.at : new Date(deadline);
        if (goalBy(end)) {
          step.outcome = 'goal_reached';
          return goalReached();
        }
        clock = end;
        if (arrived) consumed.add(arrived);
        step.outcome = arrived ? 'event' : 'timeout';
        nodeId = arrived ? node.onEvent : node.onTimeout;
        break;
      }
      case 'branch': {
        const taken = input.branch(node, clock);
        step.outcome = taken ? 'then' : 'else';
        nodeId = taken ? node.then : node.else;
        break;
      }
      case 'exit':
        return { path, messages, outcome: { status: 'completed', exitReason: 'exit_node', at: clock } };
    }
  }
  return { path, messages, outcome: { status: 'completed', exitReason: 'completed', at: clock } };
}
