// Owns the database deadline of a request whose code does not pass a Deadline to every call (the console):
// the request's Deadline is put in scope once (AsyncLocalStorage), and a schema plugin gives every query and
// aggregation started inside that scope the time left — maxTimeMS for the server and timeoutMS for the
// driver, so a store that stops answering altogether still ends the call in time (MongoOperationTimeoutError,
// which isDatabaseUnavailable maps to 503). Outside a scope (workers, scripts, start-up) nothing changes.
// Not covered: Model.create/save (mongoose passes no timeout to insertOne), bounded only by the pool's
// socketTimeoutMS (shared/db/mongo.ts); the console's answer is still bounded, by its backstop
// (api/console/request-deadline.ts).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Aggregate, MongooseQueryMiddleware, Query, Schema } from 'mongoose';
import type { Deadline } from '../deadline';

const scope = new AsyncLocalStorage<Deadline>();

/** Runs `fn` (and everything it starts) with `deadline` bounding its database calls. */
export function withDbDeadline<T>(deadline: Deadline, fn: () => T): T {
  return scope.run(deadline, fn);
}

/** Every query operation mongoose runs middleware for. */
const QUERY_OPS: MongooseQueryMiddleware[] = [
  'countDocuments',
  'deleteMany',
  'deleteOne',
  'distinct',
  'estimatedDocumentCount',
  'find',
  'findOne',
  'findOneAndDelete',
  'findOneAndReplace',
  'findOneAndUpdate',
  'replaceOne',
  'updateMany',
  'updateOne',
];

/** Milliseconds a call started now may take: what is left, at least 1 (0 would mean "no limit"). */
function timeLeft(): number | undefined {
  const deadline = scope.getStore();
  return deadline ? Math.max(1, deadline.remainingMs()) : undefined;
}

/** Mongoose schema plugin: bounds each query and aggregation by the deadline in scope (see above). */
export function dbDeadlinePlugin(schema: Schema): void {
  schema.pre(QUERY_OPS, function (this: Query<unknown, unknown>) {
    const ms = timeLeft();
    if (ms === undefined) return;
    const own = this.getOptions().maxTimeMS;
    this.setOptions({ maxTimeMS: own === undefined ? ms : Math.min(own, ms), timeoutMS: ms });
  });
  schema.pre('aggregate', function (this: Aggregate<unknown>) {
    const ms = timeLeft();
    if (ms === undefined) return;
    this.option({ maxTimeMS: ms, timeoutMS: ms });
  });
}
