"""Tool images in the provider request: after the latest prompt's tool results, as image_url parts."""

from __future__ import annotations

from tmg.llm.gateway import ProviderSpec
from tmg.llm.tool_images import prompt_images, with_tool_images
from tmg.session.history import for_model

VISION = ProviderSpec(name="p", model="openai/x", images=True)
TEXT_ONLY = ProviderSpec(name="p", model="openai/x", images=False)
CALLS = [{"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
         {"id": "c2", "type": "function", "function": {"name": "b", "arguments": "{}"}}]


def tool(call_id: str, *images: str) -> dict:
    message = {"role": "tool", "tool_call_id": call_id, "content": f"[image: image/png, 3 KB] from {call_id}"}
    if images:
        message["images"] = [{"mime": "image/png", "data": data} for data in images]
    return message


def conversation() -> list[dict]:
    return [
        {"role": "user", "content": "earlier"},
        {"role": "assistant", "content": "", "tool_calls": CALLS[:1]},
        tool("c1", "OLD"),
        {"role": "assistant", "content": "seen"},
        {"role": "user", "content": "now"},
        {"role": "assistant", "content": "", "tool_calls": CALLS},
        tool("c1", "NEW1"),
        tool("c2", "NEW2"),
    ]


def sent_to(provider: ProviderSpec, stored: list[dict] | None = None) -> list[dict]:
    """What the engine sends: the history's provider view, with the latest prompt's stored images."""
    stored = conversation() if stored is None else stored
    return with_tool_images([for_model(m) for m in stored], provider, prompt_images(stored))


def test_the_latest_prompts_images_follow_its_tool_results_in_one_user_message():
    sent = sent_to(VISION)
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "assistant", "user", "assistant", "tool", "tool",
                                         "user"]
    assert all("images" not in m for m in sent)
    last = sent[-1]["content"]
    assert last[0] == {"type": "text", "text": "The images returned by the tool calls above:"}
    assert [p["image_url"]["url"] for p in last[1:]] == ["data:image/png;base64,NEW1", "data:image/png;base64,NEW2"]
    assert "OLD" not in str(sent)  # an earlier prompt's image stays a note in the text


def test_a_model_without_image_input_gets_the_notes_alone():
    sent = sent_to(TEXT_ONLY)
    assert [m["role"] for m in sent][-2:] == ["tool", "tool"]
    assert all("images" not in m for m in sent) and "NEW1" not in str(sent)
    assert sent[-1]["content"] == "[image: image/png, 3 KB] from c2"


def test_the_stored_history_is_not_changed_and_a_conversation_without_images_is_passed_as_is():
    messages = conversation()
    sent_to(VISION, messages)
    assert messages[-1]["images"] == [{"mime": "image/png", "data": "NEW2"}]
    plain = [{"role": "user", "content": "hi"}]
    assert with_tool_images(plain, VISION, prompt_images(plain)) is plain


def test_only_the_latest_prompts_tool_results_are_looked_at():
    # An earlier prompt's images are not this prompt's: none to send, the view passed as it is.
    stored = conversation() + [{"role": "assistant", "content": "done"}, {"role": "user", "content": "next"}]
    assert prompt_images(stored) == {}
    assert prompt_images(conversation()) == {"c1": [{"mime": "image/png", "data": "NEW1"}],
                                             "c2": [{"mime": "image/png", "data": "NEW2"}]}


def test_a_prompts_own_images_are_parts_of_its_message_and_only_while_it_is_the_latest():
    stored = [
        {"role": "user", "content": "see @srv:img://a", "images": [{"mime": "image/png", "data": "PROMPT1"}]},
        {"role": "assistant", "content": "a logo"},
        {"role": "user", "content": "see @srv:img://b", "images": [{"mime": "image/jpeg", "data": "PROMPT2"}]},
    ]
    sent = sent_to(VISION, stored)
    assert sent[0]["content"] == "see @srv:img://a" and "PROMPT1" not in str(sent)  # an earlier prompt: its text
    assert sent[-1]["content"] == [{"type": "text", "text": "see @srv:img://b"},
                                   {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,PROMPT2"}}]
    assert sent_to(TEXT_ONLY, stored)[-1]["content"] == "see @srv:img://b"
