"""What the learner made, as the checks meet it: their folder, run only as child processes.

A :class:`Work` is one learner's files for one stage: the ``%%module`` files of their notebook
(and, in the clinic, the files they repaired). The checks never import them. They call the
learner's functions through a harness process (:meth:`Work.module`), and start the learner's
servers and programs as processes (:meth:`Work.program`, :meth:`Work.host`), always with the
stage's runtime (:mod:`grader.course.runtime`) as the only import path besides the learner's folder.

*How* those processes start is the :class:`Runner`'s business. In the learner's notebook it is
:class:`Runner` itself: plain child processes on their own machine. When an instructor grades, it
is a sandbox (:mod:`grader.grading.sandbox`) that sees only the learner's copy, the runtime and the
shop database; the checks are the same, and so is the verdict.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "messages.py").write_text("def valid_id(v):\\n    return isinstance(v, str)\\n")
    >>> with Work(folder, "02") as work:
    ...     work.module("messages").valid_id("7")
    True
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from reference import database

from . import runtime
from .expect import Failure
from .remote import Harness, RemoteDied, RemoteError, RemoteTimeout


class Runner:
    """Start the learner's processes as plain children of this one (the learner's own machine)."""

    isolation = "none: plain child processes (your own machine)"

    def python(self) -> str:
        return sys.executable

    def runtime(self, stage: str) -> Path:
        return runtime.cached(stage)

    def inside(self, path: Path) -> str:
        """``path`` as the learner's processes see it."""
        return str(path)

    def prepare(self, folder: Path, runtime: Path, db: Path) -> None:
        """Get ready to run processes for the learner's ``folder`` (nothing to do here)."""

    def own(self, path: Path) -> None:
        """Let the learner's processes write in ``path`` (a folder the checks made for them)."""

    def share_file(self, path: Path, inside: str) -> None:
        """Let the learner's processes write to the pipe ``path`` (seen as ``inside`` in a sandbox)."""

    def wrap(self, argv: Sequence[str], env: dict[str, str]) -> list[str]:
        """``argv`` as a command that sets ``env`` itself (so the checker can start it as it is)."""
        setter = shutil.which("env") or "/usr/bin/env"
        return [setter, "-u", "PYTHONUNBUFFERED", *(f"{k}={v}" for k, v in env.items()), *argv]


LOCAL = Runner()


class Work:
    """One learner's files for one stage, and the processes that run them."""

    def __init__(
        self,
        folder: Path,
        stage: str,
        runner: Runner = LOCAL,
        db: Path | None = None,
        guard_pipe: Path | None = None,
        answers: dict[str, Any] | None = None,
        student: str = "",
        salt: str = "",
    ) -> None:
        self.folder = Path(folder).resolve()
        self.stage = stage
        self.answers = answers or {}  # the learner's answers that are values, read as data
        self.student = student  # who the learner is (the clinic draws their cases from it)
        self.salt = salt  # the course's salt for those draws
        self.runner = runner
        self.runtime = runner.runtime(stage)
        self.db = (db if db is not None else database.ensure_default()).resolve()
        self.guard_pipe = guard_pipe  # a FIFO the grader reads, where the guard writes its refusals
        runner.prepare(self.folder, self.runtime, self.db)
        if guard_pipe is not None:
            runner.share_file(guard_pipe, "/grading/guard.pipe")
        self._harness: Harness | None = None

    def __enter__(self) -> Work:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._harness is not None:
            self._harness.close()

    # -- paths and commands ----------------------------------------------------------------------
    def env(self) -> dict[str, str]:
        env = {
            "PYTHONPATH": self.runner.inside(self.runtime),
            database.ENV_VAR: self.runner.inside(self.db),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        if self.guard_pipe is not None:
            env["MCP_LAB_GUARD_PIPE"] = self.runner.inside(self.guard_pipe)
        return env

    def python(self) -> list[str]:
        """The interpreter for the learner's processes: the standard library and the runtime only."""
        return [self.runner.python(), "-S"]

    def _lab(self, *parts: str) -> str:
        return "/".join([self.runner.inside(self.runtime), "lab_runtime", *parts])

    def file(self, name: str) -> Path:
        """The learner's ``NAME.py`` (here, in this process's view); a teaching failure if it is missing."""
        path = self.folder / f"{name}.py"
        if not path.is_file():
            raise Failure("module", f"there is no {name}.py yet: run the cell that starts with %%module {name} first")
        return path

    @contextlib.contextmanager
    def scratch(self) -> Iterator[tuple[Path, str]]:
        """A fresh folder the learner's processes can see and write: (here, as they see it); removed after."""
        path = Path(tempfile.mkdtemp(prefix=".check-", dir=self.folder))
        try:
            self.runner.own(path)
            yield path, f"{self.runner.inside(self.folder)}/{path.name}"
        finally:
            shutil.rmtree(path, ignore_errors=True)

    def inside(self, path: Path) -> str:
        """A path of the learner's folder, or the shop database, as the learner's processes see it."""
        path = Path(path).resolve()
        if path == self.db:
            return self.runner.inside(self.db)
        return f"{self.runner.inside(self.folder)}/{path.relative_to(self.folder).as_posix()}"

    def command(self, argv: Sequence[str], env: dict[str, str] | None = None) -> list[str]:
        """``argv`` (as the learner's processes see paths) as a command the checks can start (``env``:
        variables to set besides the runtime's, with paths as the learner's processes see them)."""
        return self.runner.wrap(argv, {**self.env(), **(env or {})})

    def program(self, name: str, *args: str, env: dict[str, str] | None = None) -> list[str]:
        """The command that runs the learner's ``NAME.py`` as a program (a whole server)."""
        return self.run_file(self.file(name), *args, env=env)

    def run_file(self, path: Path, *args: str, env: dict[str, str] | None = None) -> list[str]:
        """The command that runs ``path`` (in the learner's folder, or a :meth:`scratch` folder of it) as a
        program, in its own folder, under the guard."""
        return self.command([*self.python(), self._lab("run.py"), self.inside(path), *args], env)

    def host(self, piece: str, *options: str) -> list[str]:
        """The command that runs the course's server with the learner's ``piece`` in it (``options``:
        ``mcp-lab serve``'s, for a piece that takes them, with paths as the learner's processes see them)."""
        self.file(piece)
        return self.command([*self.python(), self._lab("host.py"), piece, self.runner.inside(self.folder), *options])

    def peer(self, name: str, *args: str) -> list[str]:
        """A peer server's command *as the learner's code sees it* (to hand to their code)."""
        return [*self.python(), self._lab("peers", f"{name}.py"), *args]

    def answer(self, name: str) -> Any:
        """The learner's answer ``name`` (a value, such as stage 08's ``diagnosis``)."""
        if name not in self.answers:
            raise Failure("module", f"there is no {name} yet: run the cell that sets {name} = {{...}}")
        return self.answers[name]

    # -- the learner's functions -----------------------------------------------------------------
    def harness(self) -> Harness:
        if self._harness is None:
            argv = [*self.python(), self._lab("harness.py"), self.runner.inside(self.folder)]
            # PYTHONUNBUFFERED=1 as in many notebook and container environments: a client the
            # learner writes must not pass it on to the servers it starts (it hides a missing flush).
            env = {**self.env(), "PYTHONUNBUFFERED": "1"}
            self._harness = Harness(self.runner.wrap(argv, env), program=argv, peers=self._lab("peers"))
        return self._harness

    def module(self, name: str) -> Any:
        """The learner's module ``NAME`` (from ``NAME.py``), imported in the harness process."""
        self.file(name)
        try:
            return self.harness().module(name)
        except RemoteTimeout:
            raise Failure("module", f"importing {name}.py did not finish: is there a loop at the top level?") from None
        except RemoteDied as died:
            raise Failure("module", f"importing {name}.py ended the process", stderr=died.stderr) from None
        except RemoteError as exc:
            raise Failure("module", f"importing {name}.py failed: {exc}") from None
        except Exception as exc:
            where = getattr(exc, "where", "")
            raise Failure(
                "module",
                f"importing {name}.py raised {type(exc).__name__}: {exc}",
                **({"where": where} if where else {}),
            ) from None

    def stdlib(self, name: str) -> Any:
        """A standard-library callable in the learner's process (``io.BytesIO``, ``sqlite3.connect``)."""
        return self.harness().stdlib(name)

    def fixture(self, name: str) -> Any:
        """An object of :mod:`lab_runtime.fixtures`, made in the learner's process."""
        return self.harness().fixture(name)

    def refusals(self) -> list[str]:
        """What the guard refused the learner's code in the harness, so far."""
        return self._harness.refusals() if self._harness is not None else []

    def printed(self) -> str:
        """What the learner's code printed in the harness (stdout and stderr), last lines."""
        return self._harness.stderr() if self._harness is not None else ""
