"""The kernel a submission runs in while it is graded: ipykernel, after two changes.

``python -m companion.grade.kernel -f CONNECTION_FILE`` (the grader starts it; nobody else
needs to) does what ``ipykernel_launcher`` does, after it has

* **recorded every check**: ``companion.exercises.check`` is wrapped so that each call appends
  one JSON line (the exercise id, passed or not, the case counts, the checker's messages, or
  the exception ``check`` itself raised) to the file named by ``$BOOK_GRADE_LOG``. A notebook
  that runs ``from companion.exercises import check`` gets the wrapped function. The chapters'
  exercise modules are imported here too, so that their import (torch's, a few seconds) is
  not charged to the notebook's time limit;
* **turned Python's network off**: a socket may connect only to this machine (loopback
  addresses and Unix sockets), and names other than ``localhost`` do not resolve. This is
  a guard against accidents (a data download, a model hub lookup), not a sandbox: code in
  the notebook can undo it, and a subprocess it starts is not covered (the grader also points
  proxies at a closed port and sets the offline switches of pip, npm and Hugging Face for
  those). Run the grader in a container without a network for a real boundary.

The kernel's own messages travel over ZeroMQ's loopback sockets, which do not go through
Python's ``socket`` module, so the guard does not touch them.
"""

from __future__ import annotations

import errno
import functools
import ipaddress
import json
import os
import socket
from typing import Any

LOG_ENV_VAR = "BOOK_GRADE_LOG"
#: the message a blocked connection raises (a student sees it in the cell's traceback)
BLOCKED = "network access is disabled while a notebook is graded (companion.grade)"


def _is_local(host: Any) -> bool:
    if host in (None, "", "localhost", "ip6-localhost"):
        return True
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


def _is_ip_literal(host: Any) -> bool:
    try:
        ipaddress.ip_address(str(host).split("%")[0])
    except ValueError:
        return False
    return True


def block_network() -> None:
    """Let sockets reach loopback addresses and Unix sockets only; resolve no remote names."""
    cls = socket.socket
    if getattr(cls, "_book_grade_guard", False):
        return
    inet = {socket.AF_INET, socket.AF_INET6}
    orig_connect, orig_connect_ex, orig_sendto = cls.connect, cls.connect_ex, cls.sendto
    orig_getaddrinfo = socket.getaddrinfo

    def refuse(sock: socket.socket, address: Any) -> None:
        if sock.family in inet and isinstance(address, tuple) and not _is_local(address[0]):
            raise OSError(errno.ENETUNREACH, f"{BLOCKED}: cannot reach {address[0]}")

    def connect(self: socket.socket, address: Any) -> None:
        refuse(self, address)
        return orig_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        refuse(self, address)
        return orig_connect_ex(self, address)

    def sendto(self: socket.socket, data: Any, *args: Any) -> int:
        refuse(self, args[-1] if args else None)
        return orig_sendto(self, data, *args)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not (_is_local(host) or _is_ip_literal(host)):
            raise socket.gaierror(socket.EAI_NONAME, f"{BLOCKED}: {host!r} is not looked up")
        return orig_getaddrinfo(host, *args, **kwargs)

    cls.connect, cls.connect_ex, cls.sendto = connect, connect_ex, sendto  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
    cls._book_grade_guard = True  # type: ignore[attr-defined]


def record_checks(log_path: str) -> None:
    """Wrap ``companion.exercises.check`` so that every call appends a JSON line to ``log_path``."""
    from companion import exercises

    original = exercises.check
    if getattr(original, "_book_grade_recorded", False):
        return

    def write(record: dict) -> None:
        try:
            with open(log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(record, ensure_ascii=False, default=repr) + "\n")
        except OSError:  # grading must never break the student's cell
            pass

    @functools.wraps(original)
    def check(exercise_id: str, *args: Any, **kwargs: Any) -> Any:
        try:
            result = original(exercise_id, *args, **kwargs)
        except BaseException as err:
            write({"id": str(exercise_id), "raised": f"{type(err).__name__}: {err}"})
            raise
        write({"id": str(getattr(result, "id", exercise_id)), "passed": bool(result),
               "n_cases": int(getattr(result, "n_cases", 0) or 0),
               "n_passed": int(getattr(result, "n_passed", 0) or 0),
               "failures": [str(f) for f in getattr(result, "failures", None) or []]})
        return result

    check._book_grade_recorded = True  # type: ignore[attr-defined]
    exercises.check = check
    try:  # import the chapters' exercises (and torch) now, before the notebook's clock starts
        exercises.discover()
    except Exception:  # noqa: BLE001, S110 - the notebook's own check() will report it
        pass


def main() -> None:
    """Install the check recorder and the network guard, then run ipykernel."""
    block_network()
    log_path = os.environ.get(LOG_ENV_VAR, "").strip()
    if log_path:
        record_checks(log_path)
    from ipykernel import kernelapp

    kernelapp.launch_new_instance()


if __name__ == "__main__":
    main()
