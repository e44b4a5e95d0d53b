"""``bench.transactions``' own checks: the transfers it generates, and the verification that
fails the benchmark when a system lost, invented or half-applied a transfer."""

from __future__ import annotations

from typing import Any

from bench.transactions import INITIAL_BALANCE, Workload, transfers_of, verify


class Tables:
    """A connection whose two SELECTs answer the given accounts and transfers."""

    def __init__(self, balances: dict[int, int], transfers: list[tuple[int, int, int]]) -> None:
        self.answers = {"accounts": list(balances.items()), "transfers": transfers}
        self.last: list[Any] = []

    def cursor(self) -> Tables:
        return self

    def __enter__(self) -> Tables:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def execute(self, sql: str) -> None:
        self.last = self.answers["accounts" if "accounts" in sql else "transfers"]

    def fetchall(self) -> list[Any]:
        return self.last


W = Workload(accounts=3, zipf=0.0, seed=1)
MOVES = [(0, 1, 30), (2, 0, 5)]


def balances_after(moves: list[tuple[int, int, int]]) -> dict[int, int]:
    out = dict.fromkeys(range(W.accounts), INITIAL_BALANCE)
    for src, dst, amount in moves:
        out[src] -= amount
        out[dst] += amount
    return out


def test_a_consistent_system_passes() -> None:
    assert verify("x", Tables(balances_after(MOVES), MOVES), W, list(reversed(MOVES))) == []


def test_a_lost_transfer_a_half_applied_one_and_a_changed_total_are_reported() -> None:
    lost = verify("x", Tables(balances_after(MOVES[:1]), MOVES[:1]), W, MOVES)
    assert any("2 commits were acknowledged" in p for p in lost)
    half = balances_after(MOVES)
    half[1] -= 30  # the credit of the first transfer is missing
    problems = verify("x", Tables(half, MOVES), W, MOVES)
    assert any("add up to" in p for p in problems)
    assert any("disagree with transfers (account 1" in p for p in problems)


def test_transfers_never_move_money_from_an_account_to_itself() -> None:
    for zipf in (0.0, 1.2):
        moves = transfers_of(Workload(accounts=5, zipf=zipf, seed=3), seed=9, n=2_000)
        assert all(src != dst and 1 <= amount <= 100 for src, dst, amount in moves)
        assert {src for src, _, _ in moves} == set(range(5))
