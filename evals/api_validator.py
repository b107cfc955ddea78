"""A strict check of every request memdir sends to the Messages and Batches APIs.

The rules come from the API reference and the SDK's own types (anthropic 2.12), not from what
memdir happens to send: our mocks answer anything, the real API does not. Every respx route
(the `api` fixture) and the loopback FakeAPI run these checks first and answer a violation the
way the API would, with a 400 invalid_request_error, and the test fails at teardown. The eval relay
(evals/relay.py) checks every request it hands to a person, or replays from a cassette, the same way.
It lives in evals/ (not tests/) so that the eval harness can use it; the tests import it from here.

Rules:
- top-level parameters: only those in `MessageCreateParams` (headers such as workspace_id are not
  body fields); model, max_tokens and messages required; model from the SDK's list, not deprecated;
- messages: non-empty, ending with a user turn (5.x models reject assistant prefill); text blocks
  and string contents non-empty (whitespace-only counts as empty);
- tool_use / tool_result: every assistant turn with tool_use is followed by a user turn that starts
  with one tool_result per tool_use id, and a tool_result answers the turn right before it;
- cache_control: at most 4 breakpoints (the top-level one counts), `ephemeral`, ttl 5m or 1h, never
  on thinking blocks or empty text, and no 1h breakpoint after a 5m one (tools -> system -> messages);
- thinking / effort: the types each model accepts (no manual budgets on 5.x, `disabled` only where
  documented, `between_tools` only on Sonnet 5.5 and not above high effort); no forced tool_choice
  where the model rejects it;
- tools: unique names matching ^[a-zA-Z0-9_-]{1,128}$ with an object input_schema;
- output_config: only the SDK's `OutputConfigParam` keys; a `format` is `{"type": "json_schema", "schema": {...}}`
  whose every object schema says `additionalProperties: false` (structured outputs reject any other);
- batches: only `requests`; 1..100,000 requests and at most 256 MB; custom_id matching
  ^[a-zA-Z0-9_-]{1,64}$ and unique; each `params` a valid non-streaming request.
"""

from __future__ import annotations

import json
import re
import typing

from memdir import constants as C

CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
EFFORTS = ("low", "medium", "high", "xhigh", "max")
NO_DISABLED = ("claude-sonnet-5-5", "claude-opus-5-5", "claude-fable-5-2", "claude-mythos-5-2", "claude-fable-5-1",
               "claude-mythos-5-1", "claude-fable-5", "claude-mythos-5")
NO_MANUAL_BUDGET_PREFIXES = ("claude-fable-5", "claude-mythos-5", "claude-opus-5", "claude-sonnet-5",
                             "claude-haiku-5", "claude-opus-4-7", "claude-opus-4-8")
CACHEABLE = {"text", "image", "document", "tool_use", "tool_result", "search_result"}


def _sdk_params() -> tuple[frozenset[str], frozenset[str], dict]:
    from anthropic.resources.messages.messages import DEPRECATED_MODELS
    from anthropic.types import model as model_module
    from anthropic.types.message_create_params import MessageCreateParamsBase

    params = set(MessageCreateParamsBase.__annotations__) - {"user_profile_id", "workspace_id"}
    literal = typing.get_args(model_module.Model)[0]
    return frozenset(params | {"stream"}), frozenset(typing.get_args(literal)), dict(DEPRECATED_MODELS)


ALLOWED_PARAMS, SDK_MODELS, DEPRECATED = _sdk_params()


def _beta_params() -> frozenset[str]:
    """A beta request (client.beta.messages, e.g. the SDK's tool runner: an `anthropic-beta` header or
    `?beta=true`) takes the beta params too, such as `thread`; `betas` is that header, never a body field."""
    from anthropic.types.beta.message_create_params import MessageCreateParamsBase as BetaParams

    return ALLOWED_PARAMS | (frozenset(BetaParams.__annotations__) - {"betas", "user_profile_id", "workspace_id"})


BETA_ALLOWED_PARAMS = _beta_params()


def _blocks(content) -> list:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def _check_thinking(body: dict, errors: list[str]) -> None:
    model = str(body.get("model", ""))
    thinking = body.get("thinking")
    effort = (body.get("output_config") or {}).get("effort")
    if effort is not None and effort not in EFFORTS:
        errors.append(f"output_config.effort {effort!r} is not one of {EFFORTS}")
    if thinking is None:
        return
    kind = thinking.get("type")
    if kind not in ("enabled", "disabled", "adaptive", "between_tools"):
        errors.append(f"thinking.type {kind!r} is unknown")
    if kind == "enabled":
        if model.startswith(NO_MANUAL_BUDGET_PREFIXES):
            errors.append(f"thinking.type 'enabled' (a manual budget) is not supported on {model}; use adaptive")
        elif int(thinking.get("budget_tokens", 0)) < 1024 or thinking["budget_tokens"] >= body.get("max_tokens", 0):
            errors.append("thinking.budget_tokens must be >= 1024 and below max_tokens")
    if kind == "disabled" and model in NO_DISABLED:
        errors.append(f"thinking.type 'disabled' is not supported on {model}")
    if kind == "between_tools" and model != "claude-sonnet-5-5":
        errors.append(f"thinking.type 'between_tools' is not supported on {model}")
    if kind in ("disabled", "between_tools") and effort in ("xhigh", "max"):
        errors.append(f"thinking.type {kind!r} cannot be combined with effort {effort!r}")


def _closed_objects(schema: object, where: str, errors: list[str]) -> None:
    """Structured outputs accept an object schema only with `additionalProperties: false`."""
    if isinstance(schema, list):
        for i, item in enumerate(schema):
            _closed_objects(item, f"{where}.{i}", errors)
        return
    if not isinstance(schema, dict):
        return
    if schema.get("type") == "object" and schema.get("additionalProperties") is not False:
        errors.append(f"{where}: an object schema needs additionalProperties: false for structured outputs")
    for key, value in schema.items():
        if isinstance(value, (dict, list)) and key not in ("enum", "const", "default", "examples"):
            _closed_objects(value, f"{where}.{key}", errors)


def _check_output_config(body: dict, errors: list[str]) -> None:
    from anthropic.types.json_output_format_param import JSONOutputFormatParam
    from anthropic.types.output_config_param import OutputConfigParam

    config = body.get("output_config")
    if config is None:
        return
    if not isinstance(config, dict):
        errors.append("output_config: must be an object")
        return
    errors += [f"output_config.{key}: Extra inputs are not permitted" for key in config
               if key not in OutputConfigParam.__annotations__]
    form = config.get("format")
    if form is None:
        return
    if not isinstance(form, dict):
        errors.append("output_config.format: must be an object")
        return
    errors += [f"output_config.format.{key}: Extra inputs are not permitted" for key in form
               if key not in JSONOutputFormatParam.__annotations__]
    if form.get("type") != "json_schema":
        errors.append(f"output_config.format.type {form.get('type')!r} must be 'json_schema'")
    if not isinstance(form.get("schema"), dict):
        errors.append("output_config.format.schema: Field required (a JSON schema object)")
    else:
        _closed_objects(form["schema"], "output_config.format.schema", errors)


def _check_tools(body: dict, errors: list[str]) -> None:
    names = []
    for tool in body.get("tools") or []:
        if "type" in tool and tool["type"] not in ("custom",):
            continue  # server / client-side typed tools have their own schema
        name = tool.get("name", "")
        if not TOOL_NAME.match(name):
            errors.append(f"tools: name {name!r} must match {TOOL_NAME.pattern}")
        if (tool.get("input_schema") or {}).get("type") != "object":
            errors.append(f"tools.{name}: input_schema must be a JSON schema of type 'object'")
        names.append(name)
    if len(names) != len(set(names)):
        errors.append("tools: names must be unique")
    choice = (body.get("tool_choice") or {}).get("type")
    from memdir.llm import NO_FORCED_TOOL_CHOICE

    if choice in ("any", "tool") and body.get("model") in NO_FORCED_TOOL_CHOICE:
        errors.append(f"tool_choice {choice!r} (forced tool use) is not supported on {body.get('model')}")


def _check_messages(body: dict, errors: list[str]) -> None:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        errors.append("messages: at least one message is required")
        return
    paused = any(b.get("type") == "server_tool_use" for b in _blocks(messages[-1].get("content")))
    if messages[-1].get("role") != "user" and not paused:  # a paused server-tool turn is sent back to continue
        errors.append("messages: the last message must be a user turn (assistant prefill is not supported)")
    seen_ids: set[str] = set()
    for i, message in enumerate(messages):
        role = message.get("role")
        if role not in ("user", "assistant"):
            errors.append(f"messages.{i}.role {role!r} must be user or assistant")
        content = message.get("content")
        if isinstance(content, str) and not content.strip():
            errors.append(f"messages.{i}: content must be non-empty")
        blocks = _blocks(content)
        if not blocks:
            errors.append(f"messages.{i}: content must be non-empty")
        for j, block in enumerate(blocks):
            if block.get("type") == "text" and not str(block.get("text") or "").strip():
                errors.append(f"messages.{i}.content.{j}: text content blocks must be non-empty")
            if block.get("type") == "tool_use":
                if block.get("id") in seen_ids:
                    errors.append(f"messages.{i}.content.{j}: tool_use ids must be unique ({block.get('id')})")
                seen_ids.add(block.get("id"))
        wanted = [b.get("id") for b in blocks if b.get("type") == "tool_use"] if role == "assistant" else []
        if i > 0 and role == "user":
            before = messages[i - 1]
            asked = [b.get("id") for b in _blocks(before.get("content")) if b.get("type") == "tool_use"] \
                if before.get("role") == "assistant" else []
            for j, block in enumerate(blocks):
                if block.get("type") == "tool_result" and block.get("tool_use_id") not in asked:
                    errors.append(f"messages.{i}.content.{j}: tool_result {block.get('tool_use_id')} has no "
                                  "matching tool_use in the previous assistant turn")
        elif role == "user" and (body.get("thread") or {}).get("type") != "continue":
            # (a continued beta thread sends only the new turn: the tool_use it answers is server-held)
            for j, block in enumerate(blocks):
                if block.get("type") == "tool_result":
                    errors.append(f"messages.{i}.content.{j}: tool_result without a preceding tool_use turn")
        if wanted:
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            if nxt is None or nxt.get("role") != "user":
                errors.append(f"messages.{i}: tool_use ids {wanted} were found without tool_result blocks "
                              "immediately after")
                continue
            nblocks = _blocks(nxt.get("content"))
            lead = []
            for block in nblocks:
                if block.get("type") != "tool_result":
                    break
                lead.append(block.get("tool_use_id"))
            if sorted(lead) != sorted(wanted) or len(lead) != len([b for b in nblocks if b.get("type") == "tool_result"]):
                errors.append(f"messages.{i + 1}: must begin with exactly one tool_result per tool_use {wanted}, "
                              f"before any other content (got {lead})")


def _check_cache_control(body: dict, errors: list[str]) -> None:
    marks: list[tuple[str, dict, dict | None]] = []
    for tool in body.get("tools") or []:
        if tool.get("cache_control"):
            marks.append((f"tools.{tool.get('name')}", tool["cache_control"], None))
    system = body.get("system")
    for j, block in enumerate(system if isinstance(system, list) else []):
        if block.get("cache_control"):
            marks.append((f"system.{j}", block["cache_control"], block))
    for i, message in enumerate(body.get("messages") or []):
        for j, block in enumerate(_blocks(message.get("content"))):
            if block.get("cache_control"):
                marks.append((f"messages.{i}.content.{j}", block["cache_control"], block))
    if body.get("cache_control"):
        marks.append(("cache_control", body["cache_control"], None))
    if len(marks) > 4:
        errors.append(f"A maximum of 4 blocks with cache_control may be provided. Found {len(marks)}.")
    last_ttl = None
    for where, mark, block in marks:
        if mark.get("type") != "ephemeral" or set(mark) - {"type", "ttl"}:
            errors.append(f"{where}.cache_control must be {{'type': 'ephemeral'[, 'ttl']}}, got {mark}")
        ttl = mark.get("ttl", "5m")
        if ttl not in ("5m", "1h"):
            errors.append(f"{where}.cache_control.ttl {ttl!r} must be '5m' or '1h'")
        if block is not None and block.get("type") not in CACHEABLE:
            errors.append(f"{where}: cache_control cannot be set on a {block.get('type')} block")
        if block is not None and block.get("type") == "text" and not str(block.get("text") or "").strip():
            errors.append(f"{where}: cache_control cannot be set on an empty text block")
        if last_ttl == "5m" and ttl == "1h":
            errors.append(f"{where}: a 1h cache_control breakpoint must not come after a 5m one")
        last_ttl = ttl


def validate_message_request(body: dict, *, in_batch: bool = False, beta: bool = False) -> list[str]:
    """Every violation in one Messages API request body (empty when the API would accept it)."""
    if not isinstance(body, dict):
        return ["the request body must be a JSON object"]
    allowed = BETA_ALLOWED_PARAMS if beta else ALLOWED_PARAMS
    errors = [f"{key}: Extra inputs are not permitted" for key in body if key not in allowed]
    for key in ("model", "max_tokens", "messages"):
        if key not in body:
            errors.append(f"{key}: Field required")
    model = body.get("model")
    if model is not None and model not in SDK_MODELS:
        errors.append(f"model {model!r} is not in the SDK's model list")
    if model in DEPRECATED:
        errors.append(f"model {model!r} is deprecated (end of life {DEPRECATED[model]})")
    max_tokens = body.get("max_tokens")
    if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 1):
        errors.append("max_tokens must be a positive integer")
    if in_batch and body.get("stream"):
        errors.append("params.stream: streaming is not supported in a batch")
    system = body.get("system")
    if isinstance(system, str) and system == "":
        errors.append("system: must be non-empty when given")
    for j, block in enumerate(system if isinstance(system, list) else []):
        if block.get("type") != "text" or not str(block.get("text") or "").strip():
            errors.append(f"system.{j}: system blocks must be non-empty text")
    _check_messages(body, errors)
    _check_cache_control(body, errors)
    _check_thinking(body, errors)
    _check_output_config(body, errors)
    _check_tools(body, errors)
    return errors


def validate_batch_request(body: dict, raw_size: int | None = None) -> list[str]:
    """Every violation in one `POST /v1/messages/batches` body."""
    if not isinstance(body, dict):
        return ["the request body must be a JSON object"]
    errors = [f"{key}: Extra inputs are not permitted" for key in body if key != "requests"]
    requests = body.get("requests")
    if not isinstance(requests, list) or not requests:
        return errors + ["requests: at least one request is required"]
    if len(requests) > C.BATCH_MAX_REQUESTS:
        errors.append(f"requests: at most {C.BATCH_MAX_REQUESTS:,} requests per batch (got {len(requests):,})")
    size = raw_size if raw_size is not None else len(json.dumps(body).encode())
    if size > C.BATCH_MAX_BYTES:
        errors.append(f"the batch is {size:,} bytes; at most {C.BATCH_MAX_BYTES:,}")
    seen: set[str] = set()
    for n, request in enumerate(requests):
        custom_id = request.get("custom_id")
        if not isinstance(custom_id, str) or not CUSTOM_ID.match(custom_id):
            errors.append(f"requests.{n}.custom_id {custom_id!r} must match {CUSTOM_ID.pattern}")
        elif custom_id in seen:
            errors.append(f"requests.{n}.custom_id {custom_id!r} is not unique within the batch")
        seen.add(custom_id)
        extra = set(request) - {"custom_id", "params"}
        if extra:
            errors.append(f"requests.{n}: Extra inputs are not permitted: {sorted(extra)}")
        errors += [f"requests.{n}.params.{e}" for e in validate_message_request(request.get("params"), in_batch=True)]
    return errors


def validate(method: str, path: str, body: bytes, *, beta: bool = False) -> list[str]:
    """Dispatch on the endpoint; [] for endpoints with no body rules (GET polling, results)."""
    if method != "POST":
        return []
    path = path.rstrip("/")
    try:
        data = json.loads(body or b"{}")
    except ValueError:
        return ["the request body is not JSON"]
    if path.endswith("/v1/messages"):
        return validate_message_request(data, beta=beta)
    if path.endswith("/v1/messages/batches"):
        return validate_batch_request(data, raw_size=len(body))
    return []


def error_body(errors: list[str]) -> dict:
    """What the API answers a malformed request with."""
    return {"type": "error", "error": {"type": "invalid_request_error", "message": "; ".join(errors)[:2000]}}


def install(router) -> list[str]:
    """Put the validator in front of every route of a respx router; returns the violations list
    (also `router.violations`). Use `check(router)` at the end, or the `api` fixture, which does."""
    import httpx

    violations: list[str] = []

    def strict(request):
        errors = validate(request.method, request.url.path, request.content,
                          beta=bool(request.headers.get("anthropic-beta")) or request.url.params.get("beta") == "true")
        if not errors:
            return None  # valid: fall through to the test's own routes
        violations.append(f"{request.method} {request.url.path}: " + "; ".join(errors))
        return httpx.Response(400, json=error_body(errors), headers={"x-should-retry": "false"})

    router.route(name="strict-request-validator").mock(side_effect=strict)
    router.violations = violations
    return violations


def check(router) -> None:
    if router.violations and not getattr(router, "violations_expected", False):
        raise AssertionError("requests the real API would reject:\n" + "\n".join(router.violations))
