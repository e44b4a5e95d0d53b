"""Users of the MySQL server, kept in ``users.json`` in the data directory.

Passwords are stored as MySQL stores them for ``mysql_native_password``:
``SHA1(SHA1(password))`` in hex, never in clear; the protocol's challenge-response checks
a client against that hash without the password crossing the wire. Each user may connect
from anywhere (``"%"``) or from the loopback interface only (``"localhost"``). A fresh
data directory gets ``root`` with an empty password, from loopback only, as a fresh MySQL
installation does.
"""

from __future__ import annotations

import ipaddress
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from mysql_mimic.auth import IdentityProvider, NativePasswordAuthPlugin, NoLoginAuthPlugin, User

FILE_NAME = "users.json"
ANY_HOST, LOOPBACK = "%", "localhost"


@dataclass(frozen=True)
class Account:
    name: str
    auth_string: str  # SHA1(SHA1(password)) hex; "" for an empty password
    host: str = LOOPBACK


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
        return {name: Account(name, entry.get("auth_string", ""), entry.get("host", LOOPBACK))
                for name, entry in data.get("users", {}).items()}

    def _save(self, accounts: dict[str, Account]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"users": {a.name: {"auth_string": a.auth_string, "host": a.host}
                          for a in accounts.values()}}
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2) + "\n")
        os.chmod(tmp, 0o600)
        tmp.replace(self.path)

    def set_user(self, name: str, password: str, host: str = ANY_HOST) -> None:
        """Add a user or change its password and host."""
        if host not in (ANY_HOST, LOOPBACK):
            raise ValueError(f"host must be {ANY_HOST!r} or {LOOPBACK!r}, got {host!r}")
        accounts = dict(self.accounts)
        accounts[name] = Account(name, hash_password(password), host)
        self._save(accounts)
        self.accounts = accounts

    def remove_user(self, name: str) -> None:
        accounts = dict(self.accounts)
        if accounts.pop(name, None) is None:
            raise KeyError(name)
        self._save(accounts)
        self.accounts = accounts

    def identity(self, peer_host: str | None) -> IdentityProvider:
        """The identity provider for one connection from ``peer_host``."""
        return _Identity(self, _is_loopback(peer_host))


class _Identity(IdentityProvider):
    """Unknown users and users connecting from a host they may not use get the
    ``mysql_no_login`` plugin: access denied (1045), as MySQL answers, without telling
    which of name, password or host was wrong."""

    def __init__(self, store: UserStore, loopback: bool) -> None:
        self.store = store
        self.loopback = loopback

    def get_plugins(self) -> list:
        return [NativePasswordAuthPlugin(), NoLoginAuthPlugin()]

    async def get_user(self, username: str) -> Optional[User]:
        account = self.store.accounts.get(username)
        if account is None or (account.host == LOOPBACK and not self.loopback):
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
