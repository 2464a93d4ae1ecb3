// s4u emitter: written next.
