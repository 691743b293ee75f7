"""The GUI family: screens, a mouse and a keyboard.

* ``gui/<family>_<name>-vN`` — the pixel twin of every web and MiniWoB++ id
  (``gui/web_Forum-v1``, ``gui/miniwob_click_test-v0``; the shop's is left out, see
  ``pixel_ids.LEFT_OUT``): the web task by screenshots and mouse and keyboard actions
  (:mod:`agentgym.envs.gui.pixel`).
* ``gui/<App>-v0`` — desktop tasks in OSWorld's shape (``gui/Mousepad-v0``, one id per
  application with templates in :mod:`agentgym.envs.gui.tasks`): Xvfb, openbox and real
  applications as an unprivileged uid (:mod:`agentgym.envs.gui.desktop_env`,
  ``docs/envs/gui.md``, "Desktop tasks").

Importing this module registers the ids and imports nothing heavy. See ``docs/envs/gui.md``.
"""

# --- pixel web (envs/gui/pixel*.py) ---
from agentgym.envs.gui.pixel_ids import register_pixel_twins

register_pixel_twins()

# --- desktop tasks (envs/gui/osworld.py, envs/gui/tasks/) ---
from agentgym.envs.gui.osworld import register_desktop_ids  # noqa: E402

register_desktop_ids()
