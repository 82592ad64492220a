// Owns the MongoDB connection (MongoDB 7 in production, FerretDB 1.24 locally): one per process.
// Request-path reads carry their own deadline (maxTimeMS plus a client-side race, see shared/deadline.ts);
// the pool settings below bound what a request can wait for a connection at all.
import mongoose, { type Connection } from 'mongoose';

/**
 * Driver pool size per process: the embedded store serialises the work, and more than 20 connections bring no
 * steady gain (docs/reliability.md, "Document store alone"), so 20.
 */
const MONGO_POOL_SIZE = 20;
/**
 * Longest wait for a pooled connection: the shortest request budget (emotion, 5 s). Each request also races
 * its own deadline; this only keeps the driver from holding waiters nobody awaits any more.
 */
const MONGO_POOL_WAIT_MS = 5000;

export async function connectMongo(uri: string, dbName?: string): Promise<Connection> {
  const conn = mongoose.createConnection(uri, {
    dbName,
    serverSelectionTimeoutMS: 3000,
    heartbeatFrequencyMS: 2000,
    connectTimeoutMS: 3000,
    socketTimeoutMS: 10_000,
    maxPoolSize: MONGO_POOL_SIZE,
    waitQueueTimeoutMS: MONGO_POOL_WAIT_MS,
    // FerretDB and MongoDB share only single-document atomicity; we never rely on more.
    retryWrites: false,
    autoIndex: true,
  });
  await conn.asPromise();
  return conn;
}

/** True when the database answers a ping within the timeout. */
export async function pingMongo(conn: Connection, timeoutMs = 1500): Promise<boolean> {
  const db = conn.db;
  if (!db) return false;
  let timer: NodeJS.Timeout | undefined;
  try {
    const ping = db
      .admin()
      .command({ ping: 1 })
      .then(() => true);
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    return await Promise.race([ping, timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** MongoDB's error code when an operation ran past its maxTimeMS. */
const MAX_TIME_MS_EXPIRED = 50;

/** True for errors that mean "the database is unreachable or too slow to answer in time", as opposed to a bad query. */
export function isDatabaseUnavailable(err: unknown): boolean {
  if ((err as { code?: unknown })?.code === MAX_TIME_MS_EXPIRED) return true;
  const name = (err as { name?: string })?.name ?? '';
  return /MongoServerSelectionError|MongoNetworkError|MongoNetworkTimeoutError|MongoNotConnectedError|MongoTopologyClosedError|MongooseServerSelectionError|MongoPoolClearedError|MongoWaitQueueTimeoutError|MongoOperationTimeoutError/.test(
    name,
  );
}
