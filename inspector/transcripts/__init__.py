"""Transcript importers: real agent transcripts → one flat OpenAI-shape conversation with origins.

Formats (``list_formats()``, detection order): ``tau-bench``, ``tau2-bench``, ``swe-agent``,
``letta``, ``inspect-ai``, ``otel-genai``, ``openhands``, ``bashkit``, ``mas-lab``, ``claude-code``,
``litellm``, ``openai-log``, ``anthropic``, ``openai``. Every message is kept, in order,
with a locator into its source file; anything a strict provider would reject is reported in
``Transcript.irregularities`` and left for the engine's pairing repair. Bad input raises
:class:`TranscriptError` and nothing else.
"""

from inspector.transcripts.api import (
    iter_transcripts,
    list_conversations,
    load_transcript,
    parse_transcript,
    sample_path,
    transcript_to_json,
)
from inspector.transcripts.detect import Importer, detect_format, list_formats, register
from inspector.transcripts.model import (
    STANDARD_ROLES,
    ConversationInfo,
    Irregularity,
    Message,
    ObservedCompaction,
    ObservedPayload,
    Transcript,
    TranscriptError,
    TranscriptReadError,
)

__all__ = [
    "STANDARD_ROLES",
    "ConversationInfo",
    "Importer",
    "Irregularity",
    "Message",
    "ObservedCompaction",
    "ObservedPayload",
    "Transcript",
    "TranscriptError",
    "TranscriptReadError",
    "detect_format",
    "iter_transcripts",
    "list_conversations",
    "list_formats",
    "load_transcript",
    "parse_transcript",
    "register",
    "sample_path",
    "transcript_to_json",
]
