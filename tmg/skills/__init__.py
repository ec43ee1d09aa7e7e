"""Agent Skills: folders with a SKILL.md (name and description front matter, then instructions).

The catalog (names and descriptions) rides in the system message; a skill's body is loaded only
when it is activated, by the model (``activate_skill``) or the user (``/name``, ``$name``).
"""
