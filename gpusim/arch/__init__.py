"""The machine description, the bottom layer: GPU configs (``config``), the CUDA occupancy rules
(``occupancy``), the opcode table (``isa``) and the integer encoding of a lowered program (``codes`` for
opcodes and modifiers, ``layout`` for the code matrix's columns and the address map). Everything above
reads these; nothing here imports another gpusim layer (only ``gpusim.errors``)."""
