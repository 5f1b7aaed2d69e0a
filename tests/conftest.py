import freezegun

# freezegun swaps datetime in every loaded module while time is frozen; the
# kubernetes client's pydantic models must keep the real one to build schemas.
freezegun.configure(extend_ignore_list=["kubernetes", "pydantic", "pydantic_core", "urllib3"])
