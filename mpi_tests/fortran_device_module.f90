! Device memory for the Fortran tests, through bind(C) to the launched
! tests' C++ API (common/fortran_bridge.cc): the emulation's under
! libcumpi_emu.so, cudaMalloc's on a GPU. A device array is a Fortran
! pointer to its address, declared contiguous so that no compiler makes a
! temporary copy of it (which would touch device memory) when it is passed.
module cumpi_test_device
  use, intrinsic :: iso_c_binding
  implicit none
  interface
    subroutine cumpi_test_init_device() bind(C)
    end subroutine
    function cumpi_test_device_alloc(bytes) bind(C) result(address)
      import :: c_ptr, c_size_t
      integer(c_size_t), value :: bytes
      type(c_ptr) :: address
    end function
    subroutine cumpi_test_device_free(device) bind(C)
      import :: c_ptr
      type(c_ptr), value :: device
    end subroutine
    subroutine cumpi_test_device_upload(device, host, bytes) bind(C)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: device, host
      integer(c_size_t), value :: bytes
    end subroutine
    subroutine cumpi_test_device_download(host, device, bytes) bind(C)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: host, device
      integer(c_size_t), value :: bytes
    end subroutine
  end interface
end module cumpi_test_device
