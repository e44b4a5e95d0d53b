"""Users of the MySQL server, kept in ``users.json`` in the data directory.

Passwords are stored as MySQL stores them for ``mysql_native_password``:
``SHA1(SHA1(password))`` in hex, never in clear; the protocol's challenge-response checks
a client against that hash without the password crossing the wire. Each user may connect
from anywhere (``"%"``) or from the loopback interface only (``"localhost"``), and is
either read-write (the default) or read-only: a read-only user reads tables and views but
cannot write rows or change the program (no DDL), over MySQL and HTTP alike. A fresh
data directory gets ``root`` with an empty password, from loopback only, as a fresh MySQL
installation does.

The HTTP API checks the same accounts with Basic authentication (the password is hashed
the same way and compared with the stored hash); a request without credentials is the
user ``root`` with an empty password, so it is let in only while root has none.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import ssl
from dataclasses import dataclass
from pathlib import Path

from mysql_mimic.auth import IdentityProvider, NativePasswordAuthPlugin, NoLoginAuthPlugin, User

FILE_NAME = "users.json"
ANY_HOST, LOOPBACK = "%", "localhost"


@dataclass(frozen=True)
class Account:
    name: str
    auth_string: str  # SHA1(SHA1(password)) hex; "" for an empty password
    host: str = LOOPBACK
    read_only: bool = False

    def may_connect_from(self, peer_host: str | None) -> bool:
        return self.host == ANY_HOST or _is_loopback(peer_host)


def hash_password(password: str) -> str:
    return NativePasswordAuthPlugin.create_auth_string(password) if password else ""


class UserStore:
    """The accounts of one data directory (read at start-up and after each change)."""

    def __init__(self, directory: str | Path) -> None:
        self.path = Path(directory) / FILE_NAME
        if not self.path.exists():
            self._save({"root": Account("root", "", LOOPBACK)})
        self.accounts = self._load()

    def _load(self) -> dict[str, Account]:
        data = json.loads(self.path.read_text())
        return {name: Account(name, entry.get("auth_string", ""), entry.get("host", LOOPBACK),
                              bool(entry.get("read_only", False)))
                for name, entry in data.get("users", {}).items()}

    def _save(self, accounts: dict[str, Account]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"users": {a.name: {"auth_string": a.auth_string, "host": a.host,
                                   "read_only": a.read_only}
                          for a in accounts.values()}}
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2) + "\n")
        os.chmod(tmp, 0o600)
        tmp.replace(self.path)

    def set_user(self, name: str, password: str, host: str = ANY_HOST, *,
                 read_only: bool = False) -> None:
        """Add a user or change its password, host and rights."""
        if host not in (ANY_HOST, LOOPBACK):
            raise ValueError(f"host must be {ANY_HOST!r} or {LOOPBACK!r}, got {host!r}")
        if not name or "\x00" in name or ":" in name:
            raise ValueError(f"not a user name: {name!r} (empty, or with NUL or ':')")
        accounts = dict(self.accounts)
        accounts[name] = Account(name, hash_password(password), host, read_only)
        self._save(accounts)
        self.accounts = accounts

    def remove_user(self, name: str) -> None:
        accounts = dict(self.accounts)
        if accounts.pop(name, None) is None:
            raise KeyError(name)
        self._save(accounts)
        self.accounts = accounts

    def check_password(self, name: str, password: str, peer_host: str | None) -> Account | None:
        """The account ``name`` if ``password`` is its password and it may connect from
        ``peer_host`` (the HTTP API's Basic authentication); None otherwise."""
        account = self.accounts.get(name)
        if account is None or not account.may_connect_from(peer_host):
            return None
        if not hmac.compare_digest(hash_password(password), account.auth_string):
            return None
        return account

    def is_read_only(self, name: str | None) -> bool:
        """Whether user ``name`` may only read (an unknown user may do nothing at all)."""
        account = self.accounts.get(name) if name is not None else None
        return account is None or account.read_only

    def identity(self, peer_host: str | None) -> IdentityProvider:
        """The identity provider for one connection from ``peer_host``."""
        return _Identity(self, peer_host)


class _Identity(IdentityProvider):
    """Unknown users and users connecting from a host they may not use get the
    ``mysql_no_login`` plugin: access denied (1045), as MySQL answers, without telling
    which of name, password or host was wrong."""

    def __init__(self, store: UserStore, peer_host: str | None) -> None:
        self.store = store
        self.peer_host = peer_host

    def get_plugins(self) -> list:
        return [NativePasswordAuthPlugin(), NoLoginAuthPlugin()]

    async def get_user(self, username: str) -> User | None:
        account = self.store.accounts.get(username)
        if account is None or not account.may_connect_from(self.peer_host):
            return User(name=username, auth_plugin=NoLoginAuthPlugin.name)
        return User(name=username, auth_string=account.auth_string or None,
                    auth_plugin=NativePasswordAuthPlugin.name)


def _is_loopback(host: str | None) -> bool:
    if host is None:
        return True  # a Unix socket
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def tls_context(certfile: str | Path, keyfile: str | Path) -> ssl.SSLContext:
    """The server side of TLS (1.2 or later) with this certificate chain and private key,
    for the MySQL protocol; uvicorn builds its own from the same two files."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(str(certfile), str(keyfile))
    return context
