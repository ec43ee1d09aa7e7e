"""`@server:uri` in a prompt: which words are references, and the block a read resource becomes."""

from __future__ import annotations

from tmg.mcp.resource_refs import ResourceRef, find_refs, resource_block, unknown_servers
from tmg import media

SERVERS = ("docs", "docs-2")


def test_only_a_configured_servers_name_after_an_at_sign_makes_a_reference():
    text = "mail a@b.c, ask @bob:now, read x@docs:file:///a.md and @docs:file:///b.md"
    sent, refs = find_refs(text, SERVERS)
    assert sent == text
    assert refs == [ResourceRef("docs", "file:///b.md")]  # x@docs: is inside a word, not a reference


def test_a_reference_ends_at_whitespace_less_trailing_punctuation_and_is_read_once():
    _sent, refs = find_refs("(@docs-2:mem://a/b?x=1), then @docs:mem://c. Again @docs:mem://c!", SERVERS)
    assert refs == [ResourceRef("docs-2", "mem://a/b?x=1"), ResourceRef("docs", "mem://c")]


def test_a_doubled_at_sign_escapes_a_reference():
    sent, refs = find_refs("say @@docs:file:///a.md literally, and @@ elsewhere stays", SERVERS)
    assert sent == "say @docs:file:///a.md literally, and @@ elsewhere stays" and refs == []


def test_no_servers_no_references():
    assert find_refs("@docs:file:///a.md", ()) == ("@docs:file:///a.md", [])


def test_a_block_bounds_its_text_passes_images_on_and_names_other_blobs():
    ref = ResourceRef("docs", "mem://a")
    images: list[media.Image] = []
    block = resource_block(ref, {"contents": [
        {"uri": "mem://a", "mimeType": "text/plain", "text": "x" * 20_000},
        {"uri": "mem://a.png", "mimeType": "image/png", "blob": "iVBORw0KGgo="},
        {"uri": "mem://a.bin", "mimeType": "application/zip", "blob": "UEsDBA" * 100},
    ]}, images)
    lines = block.splitlines()
    assert lines[0] == "--- resource @docs:mem://a ---" and lines[-1] == "--- end of resource @docs:mem://a ---"
    assert f"[truncated: {20_000 - media.MAX_RESOURCE_TEXT_CHARS} more characters]" in block
    assert images == [media.Image("image/png", "iVBORw0KGgo=")]
    assert "[resource mem://a.png] [image: image/png, " in block
    assert "[resource mem://a.bin] [binary: application/zip, " in block and "UEsDBA" not in block


def test_a_uri_after_a_name_no_server_has_is_said_once_and_other_at_signs_are_not():
    text = "read @dcos:file:///a.md and @dcos:file:///b.md, mail a@b.c, @bob:now, @@other:http://x, @docs:x://y"
    assert unknown_servers(text, SERVERS) == ["dcos"]
