"""Progress of a long computation in Jupyter, shown in place and leaving a deterministic output.

One output is displayed when the run starts, with a fixed line (``label``; as HTML, a span of class
``pe-progress`` that the website shows as a small note, not an output box), and updated in place
(IPython's ``display_id``) with a bar and the steps done. When the run ends the output is set back
to exactly the first line. A stored notebook therefore holds only that line, whatever the speed of
the machine, and nbval, which compares the first display of a cell with the stored output (it
ignores in-place updates), sees the same text. Outside a Jupyter kernel nothing is shown.
"""

from __future__ import annotations

from html import escape

BAR_WIDTH = 30


def in_kernel() -> bool:
    """True inside a Jupyter kernel (an IPython shell that talks to a front end)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency of the book
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


class Progress:
    """Context manager: ``with Progress(label, total, enabled=None) as bar: ... bar.update(done)``.

    ``enabled``: ``True`` always shows the output, ``False`` never, ``None`` inside a Jupyter kernel.
    """

    def __init__(self, label: str, total: int, *, enabled: bool | None = None):
        self.label, self.total = label, total
        self.enabled = in_kernel() if enabled is None else enabled
        self.handle = None

    def _bundle(self, done: int | None) -> dict:
        if done is None:  # the fixed line; on the website a quiet note (book_site.css styles .pe-progress)
            return {"text/plain": self.label, "text/html": f"<span class='pe-progress'>{escape(self.label)}</span>"}
        filled = round(BAR_WIDTH * done / self.total)
        text = f"{self.label}  [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{self.total}"
        html = (f"<code>{self.label}</code> <progress value='{done}' max='{self.total}'></progress> "
                f"{done}/{self.total}")
        return {"text/plain": text, "text/html": html}

    def __enter__(self) -> Progress:
        if self.enabled:
            from IPython.display import display

            self.handle = display(self._bundle(None), raw=True, display_id=True)
        return self

    def update(self, done: int) -> None:
        if self.handle is not None:
            self.handle.update(self._bundle(done), raw=True)

    def __exit__(self, *exc) -> None:
        if self.handle is not None:
            self.handle.update(self._bundle(None), raw=True)  # back to the first line: deterministic output
