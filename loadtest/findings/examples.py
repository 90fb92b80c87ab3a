"""An example of each finding kind's message, as its detector words one: what docs/reference/findings.md shows beside
the kinds' declarations (``finding_kinds.KINDS``), and what a test holds the detectors' own wording to.

Kept apart from the declarations, which the verdict reads: these are for readers, and every kind has one (the import
fails without).
"""

from __future__ import annotations

from ..results.finding_names import FindingKind, K

__all__ = ["EXAMPLES"]

EXAMPLES: dict[FindingKind, str] = {
    K.HOT: (
        "partition 'hot' was asked for 3,557 entities/s at peak (GET and PUT together; GET 1,363/s and PUT "
        "2,379/s at their own peaks, 37% and 63% of the entities), 178% of the 2,000/s partition target "
        "(10-second moving average); it served 2,187/s at peak (109%); means in the steady phase: asked 3,293/s, "
        "served 1,998/s"
    ),
    K.WARM: (
        "partition 'orders-17' peaked at 1,720 entities/s (GET and PUT together; GET 1,210/s and PUT 530/s at "
        "their own peaks, 70% and 30% of the entities), 86% of the 2,000/s partition target (10-second moving "
        "average); mean 1,540/s in the steady phase"
    ),
    K.COOL: (
        "partition 'hot' peaked at 640 entities/s (GET and PUT together; GET 420/s and PUT 220/s at their own "
        "peaks, 66% and 34% of the entities), 32% of the 2,000/s partition target (10-second moving average); "
        "mean 590/s in the steady phase"
    ),
    K.THROTTLED: (
        "partition 'hot': 6,031 attempts were throttled (GET 3,823, PUT 2,208): 6,031 for the partition over the "
        "throttling emulator's 2,000 entities/s per-partition budget; every one succeeded on a retry. Cause: its "
        "own load (3,660 entities/s at peak) against the 2,000/s that judged it"
    ),
    K.ERRORS: (
        "406 requests (1.69% of 23,996) were answered HTTP 404 ResourceNotFound across 20 partitions; the most: "
        "'k06' 30, 'k14' 25, 'k08' 24, 'k09' 24, 'k19' 24 and 15 more. A 4xx answer is the application's own "
        "business (an entity not there, a conflict, a condition)"
    ),
    K.EMULATOR_BOUND: (
        "Azurite used 104% of a core on average in the steady phase, at or above 90% in 52 of 55 seconds: served "
        "figures are its ceiling, not the design's"
    ),
    K.GENERATOR_BOUND: (
        "the load generator used 97% of a core on average in the steady phase, at or above 90% in 50 of 55 "
        "seconds: served figures are limited by the client"
    ),
    K.TARGET_LOST: (
        "the target stopped answering at 31 s: every one of the 2,410 operations from then to the end failed "
        "without an answer (refused, reset or timed out)"
    ),
    K.WORKER_LOST: ("worker vm-2_4711 went missing at 22 s (last report at 18 s): seconds from 18 s on lack its share"),
    K.INCOMPLETE: ("the upload of the run's outputs failed at 64.2 s: the container 'runs' could not be reached"),
    K.EMULATOR_SLOWED: (
        "GET served 890 entities/s in the steady phase's first third (from 5 s to 23 s) and 410/s in its last "
        "(from 42 s to 60 s), 54% less, while median latency rose from 16.0 to 35.0 ms and the generator kept up: "
        "the table grew from 21,000 to 118,000 rows, and Azurite's queries slow as it grows (it filters every row "
        "of the table for a query; Azure seeks on PartitionKey and RowKey). The served rates fell with the "
        "emulator, not the design: the demand offered, and the ratios against the targets in the first third, are "
        "still the design's"
    ),
    K.OUTAGE: (
        "partition 'k3' completed nothing for 4 s, from 61 s to 65 s: 212 attempts timed out, went unanswered or "
        "were refused meanwhile, the longest operation took 4.1 s; cause: the emulator's partition layer split "
        "the range of keys from 'k0' up to the end at 'k3' at 60.2 s and moved both halves to new servers: "
        "offline until 65.2 s"
    ),
    K.UNSENT: (
        "the run sent 39% of its schedule's demand (at most 30 operations in flight): 1,204 slots found all 30 "
        "operations in flight it allowed busy (--max-in-flight, per process): the schedule needed about 76 in "
        "flight (900 operations/s x 0.084 s each operation held its lane, retries and backoffs included: Little's "
        "law)"
    ),
    K.RAMP_DOMINATES: (
        "the users' ramp took 10 of the 15 s they ran (20 users), over 50%: the means cover the last 5 s and the "
        "peaks are the highest 5-second moving average"
    ),
    K.KEY_SKEW: (
        "partition 'k0000000' took 41% of the table's demand over about 64 PartitionKeys touched (an even share: "
        "2%): it reaches the 2,000/s partition target when the table takes 4,878 entities/s in all, where an even "
        "spread would reach the account's 20,000/s target first"
    ),
    K.UNSERVED: (
        "partition 'hot' served 2,038 of the 3,660 entities/s asked of it on average in the steady phase, 56% "
        "(GET 67%, PUT 47%): the throttling emulator refused it: 6,031 attempts throttled (6,031 for the "
        "partition over the throttling emulator's 2,000 entities/s per-partition budget), 953 operations failed "
        "after their retries"
    ),
    K.LOST_WRITES: (
        "3 of 10,204 acknowledged writes are not in the table as acknowledged, e.g. ['hot/000000001204', 'hot/000000001311']"
    ),
    K.CEILING: (
        "sustained ceiling 1,810 entities/s (1,810 operations/s served of 1,900 offered, the hottest partition "
        "'hot' 1,810/s, 91% of the 2,000/s partition target); limited by throttling by the throttling emulator's "
        "2,000 entities/s per-partition budget"
    ),
    K.SCANS: (
        "31% (3,100 of 10,000) of GET requests were partition range or full table scans: 'GET row range scan', 'GET table scan'"
    ),
    K.LOW_QUERY_DENSITY: ("'GET filter scan' returned 1,204 of the 120,400 entities it scanned: query density 1.0%, under 10%"),
    K.NO_PROJECTION: (
        "100% (15,087 of 15,087) of GET requests read whole entities of 1,024 bytes: 'GET point read', 'GET row range scan'"
    ),
    K.UNBATCHED_WRITES: (
        "72% (7,200 of 10,000) of single writes went from one client to one partition in a second that took 10 or more of them"
    ),
    K.READ_BEFORE_WRITE: (
        "48% (2,400 of 5,000) of inserts and unconditional updates wrote an entity the same client had just read: 'PUT insert'"
    ),
    K.APPEND_ONLY: (
        "92% (9,200 of 10,000) of writes that may create an entity used a PartitionKey after every key written "
        "before the last few: new entities pile onto one end of the key range"
    ),
    K.PREPEND_ONLY: (
        "88% (8,800 of 10,000) of writes that may create an entity used a PartitionKey before every key written "
        "before the last few: new entities pile onto one end of the key range"
    ),
}
if set(EXAMPLES) != set(FindingKind):  # a new kind's example is written here, or the import fails
    raise ImportError(f"finding kinds without an example: {sorted(set(FindingKind) - set(EXAMPLES))}")
