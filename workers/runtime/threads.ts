// Owns how the workers start worker_threads. Node 20 can abort the whole process (exit 134, "NodePlatform::
// ForIsolate ... Assertion failed (data.first) != nullptr") when a thread's isolate is torn down while one of
// its background TurboFan jobs is still compiling: the job allocates, asks the platform for the task runner of
// an isolate already unregistered, and trips the assertion. The emotion analysis pool closes its threads right
// after warm-up, exactly when such jobs are in flight (seen in CI; reproduced by 30 create / warm-up / close
// cycles of the pool: 2 of 6 runs aborted). A thread started here optimises on its own thread instead, so no
// compile job can outlive its isolate (0 of 10 runs aborted). V8 reads the flag when an isolate is created, so
// it is turned off before each thread starts; the main thread's isolate, created at start-up, keeps its
// background compiler.
import v8 from 'node:v8';
import { Worker, type WorkerOptions } from 'node:worker_threads';

export function startThread(filenameOrCode: string, options: WorkerOptions = {}): Worker {
  v8.setFlagsFromString('--no-concurrent-recompilation');
  return new Worker(filenameOrCode, options);
}
