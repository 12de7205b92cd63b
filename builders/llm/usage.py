"""Token usage of one reply, and the running summary a client prints after a run."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TokenUsage:
    """Tokens the server reported for one reply (summed over its re-asks)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens
        )


@dataclass
class UsageSummary:
    """What a client did, cumulative over its runs. Tokens count only calls made by this client:
    cache hits cost nothing now (their recorded usage stays on each :class:`LLMResult`)."""

    items: int = 0  # requests asked of the client
    cache_hits: int = 0
    api_calls: int = 0  # chat-completion calls sent (re-asks included; the SDK's own retries not)
    reasks: int = 0  # calls that re-asked after an invalid or truncated reply
    failures: int = 0
    blocked: int = 0  # replies a safety filter stopped (not failures: the item is rejected "blocked")
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0  # wall time inside run()/arun()

    def merge(self, other: UsageSummary) -> None:
        """Add another summary's counts (a run's) to this one."""
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def since(self, before: UsageSummary) -> UsageSummary:
        """What happened after ``before`` (a copy of this summary taken earlier): one run's counts."""
        return UsageSummary(
            **{name: getattr(self, name) - getattr(before, name) for name in self.__dataclass_fields__}
        )

    def snapshot(self) -> UsageSummary:
        return UsageSummary(**{name: getattr(self, name) for name in self.__dataclass_fields__})

    def __str__(self) -> str:
        return (
            f"LLM usage: {self.items} requests, {self.cache_hits} cache hits, {self.api_calls} API calls "
            f"({self.reasks} re-asks), {self.failures} failures, "
            f"{self.blocked} blocked, tokens in {self.prompt_tokens:,} / "
            f"out {self.completion_tokens:,}, {self.seconds:.1f} s"
        )
