"""Worker processes spend against their owner's in-memory accountant.

An accountant with an in-memory ledger lives in the process that created it,
its *owner*. A copy that reaches another process (pickled by joblib's loky or
multiprocessing backends, or inherited by ``fork``) holds a
:class:`RemoteLedger` instead of entries: every spend and every read goes as a
request over a local connection to the owner, which applies it to the one
ledger under that ledger's own lock and replies with the entries, the value
read or the exception raised. Spends from workers are therefore exactly as
atomic as spends from threads, and a refusal is the owner's own
:class:`~skdp.exceptions.BudgetExceededError`, raised in the worker.

The owner serves its accountants from one process-wide listener
(:class:`multiprocessing.connection.Listener`: a Unix socket in a private
temporary directory, or a named pipe on Windows; never a network address),
started lazily the first time one of its accountants is pickled, or just
before a ``fork`` while an accountant the user created is alive. A peer must
prove it knows a random 32-byte key (HMAC challenge) before anything it sends
is unpickled; the key travels only inside pickled accountants. Each
connection is served by a daemon thread; the listener closes when the last
accountant it served (pickled, or alive at a ``fork``) is garbage-collected,
and at exit.

A worker whose owner has exited, or whose accountant was garbage-collected
in the owner, gets :class:`~skdp.exceptions.AccountantCopyError`: nothing is
recorded and nothing is released.
"""

import os
import pickle
import secrets
import socket
import threading
import weakref
from multiprocessing import AuthenticationError, connection

from skdp.exceptions import AccountantCopyError

__all__ = [
    "RemoteLedger",
    "carried_here",
    "descends_from",
    "is_remote",
    "original_in_this_process",
    "register",
]

#: Seconds a worker waits for its owner's reply before it gives up (and
#: refuses: the spend may have been recorded, nothing is released).
REPLY_TIMEOUT = 300.0

#: Pending connections the listener queues (one per worker at a time).
_BACKLOG = 128


class _Service:
    """This process's accountants, and the listener that serves them."""

    def __init__(self):
        self.pid = os.getpid()
        self.authkey = secrets.token_bytes(32)
        self.accountants = weakref.WeakValueDictionary()  # token -> accountant
        self.at_fork = weakref.WeakSet()  # those that start the listener at fork
        self.listener = None
        self.address = None
        self.thread = None
        self.served = 0  # accountants served and still alive
        self.lock = threading.RLock()  # a GC callback may run under it

    def open(self):
        """Bind the listener (no thread yet); returns its address or raises."""
        with self.lock:
            if self.listener is None:
                self.listener = connection.Listener(backlog=_BACKLOG)
                self.address = self.listener.address
            return self.address

    def start(self):
        with self.lock:
            if self.listener is not None and self.thread is None:
                self.thread = threading.Thread(
                    target=self._accept_loop,
                    args=(self.listener,),
                    name="skdp-accountant-service",
                    daemon=True,
                )
                self.thread.start()

    def serve(self, accountant):
        """The reference a copy of ``accountant`` uses to reach it here."""
        with self.lock:
            # counted first: a collection between binding and counting could
            # finalize the last other served accountant and close the
            # listener whose address this copy would then carry
            self.keep_open_for(accountant)
            address = self.open()
            self.start()
        return (address, self.authkey, accountant._token, self.pid)

    def keep_open_for(self, accountant):
        """Keep the listener open while ``accountant`` lives here (copies of
        it, pickled or inherited by ``fork``, may spend through it)."""
        with self.lock:
            if not getattr(accountant, "_served", False):
                accountant._served = True
                self.served += 1
                weakref.finalize(accountant, self._one_fewer)

    def _one_fewer(self):
        if os.getpid() != self.pid:  # a forked child: not ours to close
            return
        with self.lock:
            self.served -= 1
            if self.served == 0:
                self.close()

    def close(self):
        """Stop listening; connections already open are answered until closed.

        A thread blocked in ``accept`` does not return when its socket is
        closed, so it is woken by a bare connection and closes the listener
        itself (which removes the socket file).
        """
        with self.lock:
            listener, thread = self.listener, self.thread
            self.listener = self.thread = None
        if listener is None:
            return
        if thread is None or not _wake(listener.address):
            listener.close()

    def _accept_loop(self, listener):
        while True:
            try:
                conn = listener.accept()
            except OSError:
                return  # closed
            if self.listener is not listener:  # woken by close()
                conn.close()
                listener.close()
                return
            threading.Thread(
                target=self._serve_connection,
                args=(conn,),
                name="skdp-accountant-connection",
                daemon=True,
            ).start()

    def _serve_connection(self, conn):
        with conn:
            try:  # the peer proves it holds the key before we unpickle anything
                connection.deliver_challenge(conn, self.authkey)
                connection.answer_challenge(conn, self.authkey)
            except (AuthenticationError, OSError, EOFError):
                return
            while True:
                try:
                    request = conn.recv()
                except (OSError, EOFError):
                    return
                try:
                    conn.send(self._answer(*request))
                except OSError:
                    return

    def _answer(self, token, operation, args):
        try:
            accountant = self.accountants.get(token)
            if accountant is None:
                raise AccountantCopyError(_gone_message(self.pid))
            return ("ok", _OPERATIONS[operation](accountant, *args))
        except Exception as exc:
            return ("error", _picklable(exc))


def _wake(address):
    """Make a blocked ``accept`` return: a bare connection, no handshake.
    Returns whether it connected."""
    try:
        if connection.address_type(address) == "AF_UNIX":
            with socket.socket(socket.AF_UNIX) as sock:
                sock.connect(address)
        else:
            connection.Client(address).close()
    except OSError:
        return False
    return True


def _picklable(exc):
    try:
        pickle.dumps(exc)
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


def _spend_for_a_worker(accountant, items):
    """A worker's spend, applied here as a local one (the search plan included)."""
    from skdp.utils._search_hint import spend_checked  # at call time: no cycle

    return spend_checked(accountant, items)


_OPERATIONS = {
    "spend": _spend_for_a_worker,
    "read": lambda accountant: accountant._ledger.read(),
    "totals": lambda accountant: accountant._ledger.totals(),
    "label_totals": lambda accountant: accountant._ledger.label_totals(),
}

_service = _Service()


def _parent_of(pid):
    """The parent of ``pid`` from ``/proc`` (Linux), else None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
        return int(stat[stat.rindex(b")") + 2 :].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def descends_from(pid, depth=8):
    """Whether this process was started by ``pid`` or by one of its children.

    Workers of joblib, multiprocessing and concurrent.futures are started by
    the process that dispatches to them (nested pools by a worker). A later
    session that loads a saved model is not: there the model's
    ``accountant=None`` means that session's default, not the one carried
    from the process that saved it. Where ``/proc`` is missing only the
    direct parent is checked.
    """
    current = os.getppid()
    for _ in range(depth):
        if current == pid:
            return True
        if current is None or current <= 1:
            return False
        current = _parent_of(current)
    return False


def carried_here(owner_pid):
    """Whether a default carried from process ``owner_pid`` applies here:
    in a worker it started (directly or through a pool's worker), not in
    the owner itself nor in an unrelated later session."""
    return owner_pid != os.getpid() and descends_from(owner_pid)


def register(accountant, *, at_fork=True):
    """Give an accountant with an in-memory ledger its token in this process.

    ``at_fork``: whether its being alive makes a ``fork`` start the listener
    (the automatic default accountant does not: a forked child gets a fresh
    one, see :func:`~skdp.default_accountant`).
    """
    token = secrets.token_hex(16)
    with _service.lock:
        _service.accountants[token] = accountant
        if at_fork:
            _service.at_fork.add(accountant)
    return token


def exempt_from_fork(accountant):
    """Let ``accountant`` alone not start the listener at a fork."""
    _service.at_fork.discard(accountant)


def reference(accountant):
    """What a pickled copy of an in-memory accountant carries: how to reach
    the original (``(address, authkey, token, owner pid)``)."""
    ledger = accountant._ledger
    if isinstance(ledger, RemoteLedger):
        return ledger.ref  # a copy of a copy reaches the same original
    try:
        return _service.serve(accountant)
    except OSError as exc:  # no local socket here: copies refuse, and say why
        return (None, repr(exc), accountant._token, os.getpid())


def original_in_this_process(ref):
    """The accountant ``ref`` names, if it lives in this process, else None."""
    _, _, token, pid = ref
    if pid != os.getpid() or _service.pid != pid:
        return None
    return _service.accountants.get(token)


def is_remote(accountant):
    """Whether ``accountant`` is a copy that spends through its owner."""
    return isinstance(accountant._ledger, RemoteLedger)


class RemoteLedger:
    """The ledger of an accountant that lives in another process.

    Same interface as :class:`~skdp.accounting._ledger.MemoryLedger`; each
    call is one request to the owner. ``append_if`` ignores its ``accept``:
    the owner checks with its own accountant, under its ledger's lock.
    """

    path = None

    def __init__(self, ref):
        self.ref = ref

    def read(self):
        return _request(self.ref, "read")

    def totals(self):
        return _request(self.ref, "totals")

    def label_totals(self):
        return _request(self.ref, "label_totals")

    def append_if(self, accept, items):
        return _request(self.ref, "spend", list(items))


# One connection per owner in each worker process; threads of a worker take
# turns on it.
_clients = {}
_clients_lock = threading.Lock()


def _request(ref, operation, *args):
    address, authkey, token, pid = ref
    if address is None:
        raise AccountantCopyError(_unserved_message(pid, authkey))
    # one connection per (owner, key): a copy holding another key (a forged
    # or stale reference) never rides on a connection another copy opened
    key = (address, authkey)
    with _clients_lock:
        conn, sent = _clients.get(key), False
        try:
            if conn is None:
                conn = connection.Client(address, authkey=authkey)
                _clients[key] = conn
            conn.send((token, operation, args))
            sent = True
            if not conn.poll(REPLY_TIMEOUT):
                raise TimeoutError(f"no reply within {REPLY_TIMEOUT:g} s")
            status, value = conn.recv()
        except (OSError, EOFError, AuthenticationError) as exc:
            _drop(key, conn)
            message = _unreachable_message(pid, exc, sent)
            raise AccountantCopyError(message) from exc
        except BaseException:
            # interrupted between send and reply (KeyboardInterrupt, a reply
            # that does not unpickle): the connection is out of step, and the
            # next request on it would read this one's reply (a refused spend
            # answered "ok" with another spend's entries)
            _drop(key, conn)
            raise
    if status == "error":
        raise value
    return value


def _drop(key, conn):
    _clients.pop(key, None)
    if conn is not None:
        conn.close()


def _gone_message(pid):
    return (
        f"This BudgetAccountant is a copy of an accountant with an in-memory "
        f"ledger that no longer exists in its owner process (pid {pid}): it "
        "was garbage-collected there. Nothing was charged. Keep the "
        "accountant referenced in the process that created it while workers "
        "spend from it, or share the budget through a file with "
        "BudgetAccountant(..., ledger='budget.sqlite')."
    )


def _unreachable_message(pid, exc, sent):
    outcome = (
        "Nothing was released; the request had been sent, so the owner may "
        "have recorded it (the ledger errs on the safe side)."
        if sent
        else "Nothing was charged."
    )
    return (
        "This BudgetAccountant is a copy of an accountant with an in-memory "
        f"ledger in process {pid}, and that process cannot be reached "
        f"({type(exc).__name__}: {exc}): it has exited, or the accountant was "
        f"garbage-collected there. {outcome} Keep the owner running (and the "
        "accountant referenced) while workers spend, or share the budget "
        "through a file with BudgetAccountant(..., ledger='budget.sqlite'). "
        "A model saved with pickle or joblib and loaded in a later session "
        "keeps the accountant it was given in the session that saved it: give "
        "it one of this session, est.set_params(accountant=BudgetAccountant(...)) "
        "(with accountant=None it takes this session's default)."
    )


def _unserved_message(pid, why):
    return (
        "This BudgetAccountant is a copy of an accountant with an in-memory "
        f"ledger in process {pid}, which was not serving it to other processes"
        + (f" ({why})" if why else "")
        + ", so a spend here would not reach its ledger. Nothing was charged. "
        "Pass the accountant to workers as an argument (it is then served), or "
        "share the budget through a file with BudgetAccountant(..., "
        "ledger='budget.sqlite')."
    )


# -- fork --------------------------------------------------------------------


def _before_fork():
    """Bind the listener if a child may inherit an accountant the user made,
    and keep it open while any of those lives (not only those pickled)."""
    if _service.pid == os.getpid() and len(_service.at_fork):
        for accountant in list(_service.at_fork):  # counted first, as in serve
            _service.keep_open_for(accountant)
        try:
            _service.open()
        except OSError:
            pass  # the child's copies will refuse, naming the owner


def _after_fork_in_parent():
    _service.start()  # after the fork: the child inherits no extra thread


def _after_fork_in_child():
    """Inherited accountants become copies that spend through the parent."""
    global _service, _clients, _clients_lock
    parent = _service
    _service = _Service()
    _clients, _clients_lock = {}, threading.Lock()  # sockets of the parent's
    address = parent.address if parent.listener is not None else None
    for token, accountant in list(parent.accountants.items()):
        ref = (address, parent.authkey if address else "", token, parent.pid)
        accountant._ledger = RemoteLedger(ref)
        accountant._served = False


os.register_at_fork(
    before=_before_fork,
    after_in_parent=_after_fork_in_parent,
    after_in_child=_after_fork_in_child,
)
