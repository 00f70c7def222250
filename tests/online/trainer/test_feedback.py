"""Top-k feedback compression, the sparse teacher, and the drop-oldest queue."""


import pytest
import torch
import torch.multiprocessing as mp

from online.trainer.feedback import DropOldestQueue, Feedback, compress, has_teacher, sparse_teacher


def test_compress_keeps_exact_probabilities_of_the_kept_tokens():
    logits = torch.randn(5, 50, generator=torch.Generator().manual_seed(0)) * 3
    t = compress(logits, 8)
    p = logits.softmax(-1)
    for r in range(5):
        ref = p[r].topk(8)
        assert t.ids[r].tolist() == ref.indices.tolist()
        torch.testing.assert_close(t.logp[r].exp(), ref.values)
    assert torch.all(t.mass <= 1 + 1e-6) and torch.all(t.mass > 8 / 50)
    assert compress(logits, 500).ids.shape == (5, 50)  # k beyond V keeps the whole row: mass 1
    torch.testing.assert_close(compress(logits, 500).mass, torch.ones(5))
    with pytest.raises(ValueError, match="top-k"):
        compress(logits, 0)


def test_sparse_teacher_renormalises_on_the_kept_student_tokens():
    v, width = 20, 6
    logits = torch.randn(3, v, generator=torch.Generator().manual_seed(1))
    t = compress(logits, 5)
    student_tokens = [0, 3, 4, 7, 11, 19]  # target id of each student id
    to_student = torch.full((v,), -1, dtype=torch.long)
    to_student[student_tokens] = torch.arange(width)
    teacher = sparse_teacher(t, to_student, width)
    p = logits.softmax(-1)
    for r in range(3):
        kept = set(t.ids[r].tolist())
        ref = torch.tensor([p[r, tok].item() if tok in kept else 0.0 for tok in student_tokens])
        if ref.sum() == 0:
            assert not has_teacher(teacher)[r]
            continue
        torch.testing.assert_close(teacher[r].softmax(-1), ref / ref.sum())


def test_drop_oldest_never_blocks_and_counts():
    q = DropOldestQueue(maxsize=3)  # transport holds 1
    for i in range(6):
        q.put(i)
    assert (q.sent, q.dropped, list(q.local)) == (1, 2, [3, 4, 5])
    assert q.get_batch(10, timeout=0.1) == [0]
    q.flush()
    assert q.get_batch(10, timeout=0.1) == [3]
    assert q.get_batch(10, timeout=0.01) == []
    with pytest.raises(ValueError, match="size"):
        DropOldestQueue(maxsize=0)


def test_drop_oldest_over_a_process_queue():
    ctx = mp.get_context("spawn")
    q = DropOldestQueue(ctx.Queue(maxsize=1), maxsize=4)
    for i in range(50):  # no consumer: the producer must not block
        q.put(torch.full((3,), i))
    assert q.dropped == 45 and [int(t[0]) for t in q.local] == [46, 47, 48, 49]
    assert [int(t[0]) for t in q.get_batch(4, timeout=5)] == [0]
    q.flush()
    assert [int(t[0]) for t in q.get_batch(4, timeout=5)] == [46]


def test_feedback_size_is_bounded_by_k_not_the_vocabulary():
    t = compress(torch.randn(100, 49152), 16)
    fb = Feedback("r", torch.zeros(101, dtype=torch.long), 10, t)
    assert fb.nbytes() == 101 * 8 + 100 * 16 * (4 + 8)


def test_producer_and_poller_threads_never_send_a_record_twice_or_crash():
    """vLLM mode feeds the queue from one thread and flushes it from another: every record is sent once or
    dropped, and neither thread fails."""
    import sys
    import threading

    q, got, errors, n = DropOldestQueue(maxsize=4), [], [], 500
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: the race shows within a few records
    try:
        def run(fn):
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - the test reports it
                errors.append(e)

        def produce():
            for i in range(n):
                q.put(i)

        done = threading.Event()

        def flush():
            while not done.is_set():
                q.flush()

        def consume():
            while not done.is_set() or not q.q.empty():
                got.extend(q.get_batch(8, timeout=0.01))

        threads = [threading.Thread(target=run, args=(f,)) for f in (flush, consume)]
        for t in threads:
            t.start()
        run(produce)
        while q.local:
            q.flush()
        done.set()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors[0]
    assert len(got) == len(set(got)) and q.sent == len(got) and q.sent + q.dropped == n
