"""v4_cpp (chess): the serial C++ rung, bitboards."""
