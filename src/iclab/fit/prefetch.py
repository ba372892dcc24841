"""Training batches made ahead of the step that needs them, by a background thread, so that the device does not wait
for the CPU to sample a batch and copy it over.

The batches are the ones the loop would make itself (``make(step)``, a pure function of the step), in step order,
from the step the loop starts at (a resumed run's checkpoint step). The thread makes them itself, or (``producers``
P ≥ 1, ``loop.producers``) hands them to P processes, up to ``DEPTH`` × P steps at once, and takes them back in step
order: the same numbers, made P at a time where one thread cannot keep up with a batched group's steps. On CUDA each
batch is written into one of a few pinned host buffers and copied to the device without blocking; an event recorded
after a buffer's copy tells the producer when it may write into that buffer again. On the CPU the tensors are handed
over as they are.
"""

from __future__ import annotations

import multiprocessing
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor

import numpy as np
import torch

from iclab.tasks import Batch

DEPTH = 2  # batches made ahead of the one in use
# pinned buffers on CUDA: while the consumer holds step c between the queue's get() and recording c's copy event, the
# queue may hold c + 1 … c + DEPTH and the producer fill c + DEPTH + 1; that buffer must not be c's, so DEPTH + 1
# buffers are one too few (tests/test_train.py's stand-in for pinned buffers and events shows the race)
SLOTS = DEPTH + 2


class PinnedSlot:
    """A pinned host buffer for one batch's (xs, ys), grown to the largest batch seen, and the event of its last copy
    to the device (the producer waits on it before writing the buffer again)."""

    def __init__(self) -> None:
        self.xs = self.ys = torch.empty(0, pin_memory=True)
        self.copied: torch.cuda.Event | None = None

    def fill(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        if self.copied is not None:
            self.copied.synchronize()
        return self._write("xs", batch.xs), self._write("ys", batch.ys)

    def _write(self, name: str, values: np.ndarray) -> torch.Tensor:
        buffer = getattr(self, name)
        if buffer.numel() < values.size:
            buffer = torch.empty(values.size, dtype=torch.float32, pin_memory=True)
            setattr(self, name, buffer)
        view = buffer[: values.size].view(values.shape)  # contiguous: a non-blocking copy stays non-blocking
        view.copy_(torch.from_numpy(values))
        return view


class BatchFeed:
    """``next()`` gives the (xs, ys) of steps ``start``, ``start`` + 1, … < ``stop`` on ``device``, made by
    ``make(step)``: ``ahead``, by a background thread ``DEPTH`` batches ahead (an error there is raised by
    ``next()``), with ``producers`` processes making them for it (``make`` then picklable), else when asked. Use as a
    context manager: leaving it stops the thread and the processes."""

    def __init__(self, make: Callable[[int], Batch], start: int, stop: int, device: torch.device, ahead: bool,
                 producers: int = 0):
        if producers and not ahead:
            raise ValueError(f"BatchFeed: producers={producers} make batches ahead; ahead is False")
        self.make, self.steps, self.device = make, iter(range(start, stop)), device
        self.slots = [PinnedSlot() for _ in range(SLOTS)] if ahead and device.type == "cuda" else None
        self.ready: queue.Queue | None = queue.Queue(maxsize=DEPTH) if ahead else None
        self.stopped = threading.Event()
        self.pool = None if not producers else ProcessPoolExecutor(
            producers, mp_context=multiprocessing.get_context("spawn"), initializer=install, initargs=(make,))
        self.window = DEPTH * producers
        self.thread = threading.Thread(target=self._produce, args=(range(start, stop),), daemon=True) if ahead else None
        if self.thread is not None:
            self.thread.start()

    def _made(self, steps: range) -> Iterator[tuple[int, Batch]]:
        """Each step's batch, in step order: made here, or by the producers, ``window`` steps in flight."""
        if self.pool is None:
            yield from ((step, self.make(step)) for step in steps)
            return
        pending: deque[tuple[int, Future]] = deque()
        for step in steps:
            pending.append((step, self.pool.submit(made_by_producer, step)))
            if len(pending) >= self.window:
                done, batch = pending.popleft()
                yield done, batch.result()
        while pending:
            done, batch = pending.popleft()
            yield done, batch.result()

    def _produce(self, steps: range) -> None:
        try:
            for step, batch in self._made(steps):
                if self.stopped.is_set():
                    return
                slot = None if self.slots is None else self.slots[step % len(self.slots)]
                tensors = (
                    (torch.from_numpy(batch.xs), torch.from_numpy(batch.ys)) if slot is None else slot.fill(batch)
                )
                if not self._put((step, slot, tensors)):
                    return
        except BaseException as error:  # handed to the consumer, raised there
            self._put((None, None, error))

    def _put(self, item) -> bool:
        while not self.stopped.is_set():
            try:
                self.ready.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def __next__(self) -> tuple[torch.Tensor, torch.Tensor]:
        step = next(self.steps)
        if self.ready is None:
            batch = self.make(step)
            return torch.from_numpy(batch.xs).to(self.device), torch.from_numpy(batch.ys).to(self.device)
        made, slot, tensors = self.ready.get()
        if made is None:
            raise tensors
        assert made == step, f"batch of step {made} made ahead, step {step} wanted"
        xs, ys = (t.to(self.device, non_blocking=True) for t in tensors)  # (B, K, d), (B, K)
        if slot is not None:
            slot.copied = torch.cuda.Event()
            slot.copied.record()
        return xs, ys

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        return self

    def __enter__(self) -> BatchFeed:
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        if self.thread is not None:
            self.thread.join()
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


PRODUCER_MAKE: Callable[[int], Batch] | None = None  # in a producer process: the feed's make


def install(make: Callable[[int], Batch]) -> None:
    """A producer process's start: the feed's ``make``, and one torch thread (the job's cores are counted)."""
    global PRODUCER_MAKE
    PRODUCER_MAKE = make
    torch.set_num_threads(1)


def made_by_producer(step: int) -> Batch:
    return PRODUCER_MAKE(step)
