"""The CLI's one error handler: operating-system errors become one line naming the path, never a traceback."""

from __future__ import annotations

import errno

import pytest

from builder.core.errors import os_error_message


@pytest.mark.parametrize(("exc", "expected"), [
    (OSError(errno.ENOSPC, "No space left on device", "/srv/site/api/v1/index.json"),
     "/srv/site/api/v1/index.json: the disk is full; free some space and run the command again"),
    (OSError(errno.EROFS, "Read-only file system", "/mnt/ro/site"),
     "/mnt/ro/site: the file system is read-only; pick a writable location"),
    (OSError(errno.EXDEV, "Invalid cross-device link", "/a", None, "/b"),
     "/a -> /b: Invalid cross-device link"),
    (OSError(errno.EIO, "Input/output error"),
     "the disk reported an input/output error; check the device and run the command again"),
])
def test_os_error_message_names_the_path_and_what_to_do(exc: OSError, expected: str) -> None:
    assert os_error_message(exc) == expected
