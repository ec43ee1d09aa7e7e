"""A tools/call result's content items as tmg passes them on: text, images, audio, resources, links."""

from __future__ import annotations

import base64

from mcp_types import (AudioContent, BlobResourceContents, CallToolResult, EmbeddedResource, ImageContent,
                       ResourceLink, TextContent, TextResourceContents)

from tmg.mcp.result_content import sdk_outcome
from tmg import media

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 3064).decode()


def test_audio_is_a_short_note_saying_what_was_there():
    outcome = sdk_outcome(CallToolResult(content=[AudioContent(type="audio", data="UklGR" * 2000, mime_type="audio/wav")]))
    assert outcome.text == "[audio: audio/wav, 7.3 KB, not playable here]"
    assert outcome.images == ()


def test_an_image_is_kept_with_a_note_and_a_too_large_one_only_named():
    small = ImageContent(type="image", data=PNG, mime_type="image/png")
    big = ImageContent(type="image", data="A" * (media.MAX_IMAGE_B64_CHARS + 4), mime_type="image/jpeg")
    outcome = sdk_outcome(CallToolResult(content=[small, big]))
    assert outcome.images == (media.Image("image/png", PNG),)
    assert outcome.text == "[image: image/png, 3.0 KB]\n[image: image/jpeg, 512.7 KB, too large to pass on]"


def test_at_most_a_few_images_per_result_are_kept():
    image = ImageContent(type="image", data=PNG, mime_type="image/png")
    outcome = sdk_outcome(CallToolResult(content=[image] * (media.MAX_IMAGES_PER_RESULT + 1)))
    assert len(outcome.images) == media.MAX_IMAGES_PER_RESULT
    assert outcome.text.splitlines()[-1] == "[image: image/png, 3.0 KB, one image too many to pass on]"


def test_embedded_resources_bring_their_text_bounded_and_name_their_blobs():
    text = EmbeddedResource(type="resource", resource=TextResourceContents(
        uri="file:///notes.md", mime_type="text/markdown", text="note " * (media.MAX_RESOURCE_TEXT_CHARS // 5 + 1)))
    blob = EmbeddedResource(type="resource", resource=BlobResourceContents(
        uri="file:///a.gz", mime_type="application/gzip", blob="H4sI" * 300))
    picture = EmbeddedResource(type="resource", resource=BlobResourceContents(
        uri="file:///logo.png", mime_type="image/png", blob=PNG))
    outcome = sdk_outcome(CallToolResult(content=[text, blob, picture]))
    lines = outcome.text.splitlines()
    assert lines[0] == "[resource file:///notes.md (text/markdown)]"
    assert lines[1] == "note " * (media.MAX_RESOURCE_TEXT_CHARS // 5)
    assert lines[2] == "[truncated: 5 more characters]"
    assert lines[3] == "[resource file:///a.gz] [binary: application/gzip, 900 bytes, not shown]"
    assert lines[4] == "[resource file:///logo.png] [image: image/png, 3.0 KB]"
    assert outcome.images == (media.Image("image/png", PNG),)


def test_a_resource_link_names_its_uri_title_type_and_description():
    link = ResourceLink(type="resource_link", uri="demo://r/1", name="r1", title="Report", mime_type="text/plain",
                        description="the yearly report")
    assert sdk_outcome(CallToolResult(content=[link])).text == (
        "[resource link: Report <demo://r/1> (text/plain; the yearly report)]")


def test_an_image_inside_structured_content_is_named_not_dumped():
    structured = {"caption": "logo", "image": {"mimeType": "image/png", "data": PNG}}
    outcome = sdk_outcome(CallToolResult(content=[], structured_content=structured))
    assert outcome.text == '{"caption": "logo", "image": {"mimeType": "image/png", "data": "[base64 data, 3.0 KB, omitted]"}}'
    mirrored = sdk_outcome(CallToolResult(content=[TextContent(type="text", text=f"data:image/png;base64,{PNG}")]))
    assert mirrored.text == "[base64 data, 3.0 KB, omitted]"


def test_prose_is_left_alone():
    words = "a perfectly ordinary answer " * 200
    assert sdk_outcome(CallToolResult(content=[TextContent(type="text", text=words)])).text == words


def test_structured_content_is_the_text_when_no_text_item_comes_with_it():
    image = ImageContent(type="image", data=PNG, mime_type="image/png")
    outcome = sdk_outcome(CallToolResult(content=[image], structured_content={"width": 20}))
    assert outcome.text == '[image: image/png, 3.0 KB]\n{"width": 20}'
    mirrored = sdk_outcome(CallToolResult(content=[TextContent(type="text", text="20 wide")], structured_content={"width": 20}))
    assert mirrored.text == "20 wide"
