import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { loadConfig } from '../core/config';
import { closeRedis, createRedis, redisReady } from '../db/redis';
import { type PaceLimit, SendPacer } from '../db/send-pacer';
import { achievedRate, maxInWindow } from '../test/helpers/send-windows';

/**
 * `npm run bench -- pacer`: what the shared send pacer costs and how close it keeps to its rate.
 * 1. Reservations per second one Redis sustains (no sleeping), beside a bare INCR loop on the same
 *    connections in the same run.
 * 2. The rate achieved against the configured one at 200/s and 1,000/s, by CLIENTS connections × LOOPS
 *    concurrent callers that each acquire a slot and "send" (record the instant) in a loop, with the
 *    most sends seen in any 1 s and 10 s window beside the bound floor(w × rate) + 1; at 1,000/s with
 *    the default lateness allowance (4 ms) and with none (0: the exact bound, at a cost in rate).
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 12);
const THROUGHPUT_SECONDS = Number(process.env.BENCH_THROUGHPUT_SECONDS ?? 3);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 3);
const LOOPS = Number(process.env.BENCH_LOOPS ?? 20);

const { REDIS_URL } = loadConfig(process.env);

async function connections(): Promise<Redis[]> {
  const clients = Array.from({ length: CLIENTS }, () => createRedis(REDIS_URL));
  for (const client of clients) {
    if (!(await redisReady(client, 5_000))) throw new Error(`Redis at ${REDIS_URL} is not answering`);
  }
  return clients;
}

/** Runs `loops` concurrent loops of `step` on each client for `seconds`; answers completed steps per second. */
async function perSecond(clients: Redis[], loops: number, seconds: number, step: (client: Redis) => Promise<unknown>): Promise<number> {
  let done = 0;
  const started = performance.now();
  const until = started + seconds * 1_000;
  await Promise.all(
    clients.flatMap((client) =>
      Array.from({ length: loops }, async () => {
        while (performance.now() < until) {
          await step(client);
          done += 1;
        }
      }),
    ),
  );
  return (done * 1_000) / (performance.now() - started);
}

async function throughput(clients: Redis[]): Promise<void> {
  const prefix = `bench:${randomUUID()}:`;
  const loops = 32;
  const pacers = new Map(clients.map((client) => [client, new SendPacer(client, { prefix })]));
  const unlimited: PaceLimit = { key: 'unlimited', ratePerSecond: 1_000_000 };
  let chat = 0;
  const incr = await perSecond(clients, loops, THROUGHPUT_SECONDS, (client) => client.incr(`${prefix}counter`));
  const one = await perSecond(clients, loops, THROUGHPUT_SECONDS, (client) => pacers.get(client)!.reserve([unlimited]));
  const two = await perSecond(clients, loops, THROUGHPUT_SECONDS, (client) =>
    pacers.get(client)!.reserve([unlimited, { key: `chat${(chat += 1) % 1_000}`, ratePerSecond: 1_000_000 }]),
  );
  await clients[0].del(`${prefix}counter`);
  console.log(`\nThroughput of one Redis (${clients.length} connections × ${loops} concurrent callers, ${THROUGHPUT_SECONDS} s each)`);
  console.log(`  bare INCR (baseline)             ${incr.toFixed(0).padStart(7)} /s`);
  console.log(`  reservation on one limit         ${one.toFixed(0).padStart(7)} /s   (${((one / incr) * 100).toFixed(0)}% of INCR)`);
  console.log(`  reservation on two limits        ${two.toFixed(0).padStart(7)} /s   (${((two / incr) * 100).toFixed(0)}% of INCR)`);
}

async function pacing(clients: Redis[], rate: number, maxLatenessMs: number): Promise<void> {
  const prefix = `bench:${randomUUID()}:`;
  const limit: PaceLimit = { key: 'email:ses', ratePerSecond: rate };
  const sends: number[] = [];
  const pacers = clients.map((client) => new SendPacer(client, { prefix, maxLatenessMs }));
  const until = performance.now() + SECONDS * 1_000;
  await Promise.all(
    pacers.flatMap((pacer) =>
      Array.from({ length: LOOPS }, async () => {
        while (performance.now() < until) {
          if ((await pacer.acquire([limit])).granted) sends.push(performance.now());
        }
      }),
    ),
  );
  const givenUp = pacers.reduce((sum, pacer) => sum + pacer.slotsGivenUp, 0);
  const achieved = achievedRate(sends);
  // Sends may be up to maxLatenessMs late where that is more than one interval (see send-pacer.ts).
  const bound = (seconds: number) => {
    const exact = Math.floor(seconds * rate) + 1;
    const late = Math.floor((seconds + maxLatenessMs / 1_000) * rate) + 1;
    return maxLatenessMs * rate < 1_000 ? `${exact}` : `${exact}; ${late} with sends up to ${maxLatenessMs} ms late`;
  };
  console.log(`\n${rate}/s configured, maxLatenessMs ${maxLatenessMs}, ${clients.length} connections × ${LOOPS} callers, ${SECONDS} s`);
  console.log(`  achieved (first to last send)    ${achieved.toFixed(1).padStart(7)} /s   (${((achieved / rate) * 100).toFixed(1)}% of configured; target ≥ 95%)`);
  console.log(`  most sends in any 1 s window     ${String(maxInWindow(sends, 1_000)).padStart(7)}      (bound ${bound(1)})`);
  console.log(`  most sends in any 10 s window    ${String(maxInWindow(sends, 10_000)).padStart(7)}      (bound ${bound(10)})`);
  console.log(`  slots given up (woke too late)   ${String(givenUp).padStart(7)}      (${((givenUp / (givenUp + sends.length)) * 100).toFixed(1)}% of reservations)`);
}

async function main(): Promise<void> {
  const clients = await connections();
  try {
    await throughput(clients);
    await pacing(clients, 200, 4);
    await pacing(clients, 1_000, 4);
    await pacing(clients, 1_000, 0);
  } finally {
    await Promise.all(clients.map(closeRedis));
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
