"""Choosing the MCP tools a request offers: include/exclude globs, deferral size, the search."""

from __future__ import annotations

from tmg.tools.tool_offer import FIND_LIMIT, ToolFilter, defer_limit, search


def test_include_then_exclude_globs_on_the_servers_tool_names():
    only_git_reads = ToolFilter(include=("git_*",), exclude=("git_commit", "git_reset*"))
    assert [t for t in ("git_log", "git_commit", "git_reset_hard", "read_file") if only_git_reads.allows(t)] == ["git_log"]
    assert ToolFilter().allows("anything")
    assert not ToolFilter(exclude=("*",)).allows("anything")


def test_schemas_are_deferred_past_a_tenth_of_the_context_budget():
    assert defer_limit(120_000) == 48_000  # characters: ~12,000 tokens of 120,000


def test_search_ranks_name_words_over_description_words_and_an_exact_name_first():
    catalog = {
        "mcp_git_git_log": "Shows the commit logs.",
        "mcp_fs_read_file": "Read a file; also reads logs.",
        "mcp_everything_get-tiny-image": "Returns a tiny MCP logo image.",
    }
    assert search("log", catalog) == ["mcp_git_git_log"]
    assert search("read logs", catalog) == ["mcp_fs_read_file", "mcp_git_git_log"]  # 'read' is a name word
    assert search("tiny image", catalog) == ["mcp_everything_get-tiny-image"]
    assert search("read_file", catalog)[0] == "mcp_fs_read_file"
    assert search("nothing like it", catalog) == []
    many = {f"mcp_s_t{i}": "does a thing" for i in range(20)}
    assert len(search("thing", many)) == FIND_LIMIT
