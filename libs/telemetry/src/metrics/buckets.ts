/**
 * Histogram buckets, in seconds. Chosen for what each latency is compared against: the
 * schedule-to-start alert is p99 > 200 ms, so the fine buckets sit around it; runs are bounded
 * by their timeout (SPEC default 30 s, at most minutes with awaitResults).
 */

/** Redis round trips: event appends, queue claims. */
export const FAST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1, 2.5];

/** REST calls: most answer in milliseconds, exec and wait may hold up to their call budget. */
export const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1, 2.5, 5, 10, 30, 60];

/** A run's leg or a tool call: sub-millisecond core tools to minute-long shell commands. */
export const RUN_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** Time a job waits in its queue before a worker takes it. */
export const SCHEDULE_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1, 2.5, 5, 10, 30];
