import socket

import pytest

from tests.conftest import NetworkBlocked


def test_network_is_blocked() -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        with pytest.raises(NetworkBlocked):
            s.connect(("127.0.0.1", 9))
    finally:
        s.close()
